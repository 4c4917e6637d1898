/* TechKG lineage page: draws the lineage with Cytoscape.js and adds search, a category
 * filter, a lineage highlight on hover and a technique card on click.
 *
 *   const view = TechKGLineage.mount(element, data);   // data: exports.html.page_data()
 *   view.search("delta"); view.select(iri); view.setCategoryVisible("moe", false);
 *
 * Every text from the data goes into the page through textContent, never as HTML, and
 * links are only followed for http(s) URLs, so names and titles cannot inject markup.
 */
(function () {
  "use strict";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function safeUrl(url) {
    return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
  }

  function link(url, text) {
    var href = safeUrl(url);
    if (!href) return el("span", null, text);
    var a = el("a", null, text);
    a.setAttribute("href", href);
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
    return a;
  }

  function fold(text) {
    return String(text || "").normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  }

  var KERNEL_CLASS = { verified: "ok", failing: "bad", "not run": "warn", none: "muted" };

  function mount(container, data, options) {
    options = options || {};
    container.textContent = "";
    container.classList.add("tkg-app");

    // -- layout of the page ------------------------------------------------------------
    var header = el("header", "tkg-header");
    var titleBox = el("div", "tkg-title");
    titleBox.appendChild(el("h1", null, data.title));
    var counts = data.counts;
    var summary = counts.techniques + (counts.techniques === 1 ? " technique" : " techniques") + " · " +
      counts.relations + (counts.relations === 1 ? " lineage relation" : " lineage relations");
    if (counts.papers) summary += " · " + counts.papers + " papers";
    if (counts.repositories) summary += " · " + counts.repositories + " repositories";
    var stats = el("p", "tkg-stats", summary);
    stats.setAttribute("data-techniques", String(counts.techniques));
    titleBox.appendChild(stats);
    header.appendChild(titleBox);

    var searchBox = el("div", "tkg-search");
    var input = el("input");
    input.type = "search";
    input.placeholder = "Search techniques, aliases, organisations…";
    input.setAttribute("aria-label", "Search techniques");
    var results = el("ul", "tkg-results");
    results.setAttribute("role", "listbox");
    results.hidden = true;
    searchBox.appendChild(input);
    searchBox.appendChild(results);
    header.appendChild(searchBox);

    var filters = el("div", "tkg-filters");
    filters.setAttribute("role", "group");
    filters.setAttribute("aria-label", "Categories");
    header.appendChild(filters);

    var fitButton = el("button", "tkg-fit", "Fit");
    fitButton.type = "button";
    fitButton.title = "Show the whole lineage";
    header.appendChild(fitButton);

    var body = el("div", "tkg-body");
    var canvas = el("div", "tkg-graph");
    var card = el("aside", "tkg-card");
    card.hidden = true;
    card.setAttribute("aria-live", "polite");
    body.appendChild(canvas);
    body.appendChild(card);

    var legend = el("footer", "tkg-legend");
    [["tkg-key-solid", "stated lineage"], ["tkg-key-dashed", "inferred lineage"],
     ["tkg-key-box", "lineage-only parent (not on the comparison page)"]].forEach(function (item) {
      var span = el("span", "tkg-key " + item[0]);
      legend.appendChild(span);
      legend.appendChild(el("span", "tkg-key-text", item[1]));
    });
    [[counts.accepted, "tkg-key-accepted", "added by you from citations"],
     [counts.added, "tkg-key-accepted", "added by you (kg technique)"],
     [counts.mine, "tkg-key-box", "yours: techniques you added"],
     [counts.suggested, "tkg-key-suggested", "suggested by citations (kg suggest lineage)"]].forEach(function (item) {
      if (!item[0]) return;
      legend.appendChild(el("span", "tkg-key " + item[1]));
      legend.appendChild(el("span", "tkg-key-text", item[2]));
    });
    legend.appendChild(el("span", "tkg-hint", "Hover a technique to see its lineage; click it for its card."));

    container.appendChild(header);
    container.appendChild(body);
    container.appendChild(legend);

    // -- the graph ---------------------------------------------------------------------
    var cy = cytoscape({
      container: canvas,
      elements: data.elements,
      style: data.style,
      layout: data.layout === "preset" ? { name: "preset", padding: 24 } :
        { name: "cose", animate: false, padding: 24, nodeRepulsion: 9000, idealEdgeLength: 90 },
      minZoom: 0.15,
      maxZoom: 3,
      boxSelectionEnabled: false,
      autoungrabify: false
    });
    var cards = data.cards || {};
    var hiddenCategories = {};
    var techniques = cy.nodes(".technique");

    function lineageOf(node) {
      var lineageEdges = function (e) { return e.data("kind") === "lineage"; };
      var up = node.predecessors().filter(function (e) { return e.isNode() || lineageEdges(e); });
      var down = node.successors().filter(function (e) { return e.isNode() || lineageEdges(e); });
      return node.union(up).union(down);
    }

    function clearMarks() {
      cy.elements().removeClass("faded highlighted");
    }

    function highlight(node) {
      var keep = lineageOf(node);
      cy.batch(function () {
        cy.elements().not(".category").addClass("faded");
        keep.removeClass("faded").addClass("highlighted");
        keep.nodes().parents().removeClass("faded");
      });
    }

    cy.on("mouseover", "node.technique", function (evt) { highlight(evt.target); });
    cy.on("mouseout", "node.technique", function () { clearMarks(); applySearchMarks(); });
    canvas.addEventListener("mouseleave", function () { clearMarks(); applySearchMarks(); });
    cy.on("tap", "node.technique", function (evt) { showCard(evt.target.id()); });
    cy.on("tap", "node.cluster", function (evt) {  // a folded part of the lineage: open it
      var href = evt.target.data("href");
      if (typeof href === "string" && /^\/lineage\?root=/.test(href)) window.location.assign(href);
    });
    cy.on("tap", function (evt) { if (evt.target === cy) hideCard(); });

    // -- the card ----------------------------------------------------------------------
    function row(list, label, value) {
      if (value === undefined || value === null || value === "") return;
      list.appendChild(el("dt", null, label));
      var dd = el("dd");
      if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
      list.appendChild(dd);
    }

    function lineageList(title, items) {
      var section = el("section", "tkg-lineage");
      section.appendChild(el("h3", null, title));
      var ul = el("ul");
      items.forEach(function (item) {
        var li = el("li");
        var button = el("button", "tkg-jump", item.name);
        button.type = "button";
        button.addEventListener("click", function () { select(item.id); });
        li.appendChild(button);
        li.appendChild(el("span", "tkg-relation", item.relation));
        ul.appendChild(li);
      });
      section.appendChild(ul);
      return section;
    }

    function showCard(id) {
      var info = cards[id];
      if (!info) return;
      card.textContent = "";
      card.hidden = false;
      card.setAttribute("data-technique", id);
      var close = el("button", "tkg-close", "×");
      close.type = "button";
      close.setAttribute("aria-label", "Close the card");
      close.addEventListener("click", hideCard);
      card.appendChild(close);
      var category = (data.categories || []).filter(function (c) { return c.id === info.category; })[0];
      var badge = el("span", "tkg-badge", info.categoryLabel);
      if (category) { badge.style.background = category.fill; badge.style.borderColor = category.colour; }
      card.appendChild(badge);
      var heading = el("h2", "tkg-card-title", info.name);
      card.appendChild(heading);
      if (info.nameZh) card.appendChild(el("p", "tkg-zh", info.nameZh));
      if (info.mine) card.appendChild(el("p", "tkg-note", "Yours: you added it (kg technique add)."));
      else if (info.onPage === false) card.appendChild(el("p", "tkg-note", "Lineage-only parent: not on the comparison page."));
      if (info.summary) card.appendChild(el("p", "tkg-summary", info.summary));

      var facts = el("dl", "tkg-facts");
      row(facts, "Also known as", info.aliases);
      row(facts, "Date", info.date);
      row(facts, "Author / team", info.people);
      row(facts, "Organisation", info.organisation);
      if (info.headline) row(facts, "Headline", info.headline + (info.conditional ? " *" : ""));
      var kernel = el("span", "tkg-kernel tkg-" + (KERNEL_CLASS[info.kernel] || "muted"), info.kernelLabel || info.kernel);
      row(facts, "Kernel", kernel);
      if (info.repository) row(facts, "Repository", link(info.repository, info.repository.replace(/^https?:\/\/(www\.)?/, "")));
      card.appendChild(facts);

      var papers = el("section", "tkg-papers");
      var total = info.paperCount || (info.papers ? info.papers.length : 0);
      papers.appendChild(el("h3", null, total ? "Papers (" + total + ")" : "Papers"));
      if (info.papers && info.papers.length) {
        var ul = el("ul");
        info.papers.forEach(function (p) {
          var li = el("li");
          li.appendChild(link(p.url, p.title));
          var meta = [p.role === "introduces" ? "introduces it" : "uses it", p.venue, p.issued && p.issued.slice(0, 4)]
            .filter(function (x) { return x; }).join(" · ");
          li.appendChild(el("span", "tkg-meta", meta));
          if (p.status) li.appendChild(el("span", "tkg-status", p.status));
          ul.appendChild(li);
        });
        papers.appendChild(ul);
        if (total > info.papers.length) {
          papers.appendChild(el("p", "tkg-meta", "Showing the first " + info.papers.length + " of " + total + "."));
        }
      } else {
        papers.appendChild(el("p", "tkg-meta", "No paper recorded."));
      }
      card.appendChild(papers);
      if (info.parents && info.parents.length) card.appendChild(lineageList("Derives from", info.parents));
      if (info.children && info.children.length) card.appendChild(lineageList("Derived into", info.children));
      cy.resize();
      cy.nodes(":selected").unselect();
      cy.getElementById(id).select();
      if (options.onSelect) options.onSelect(id, info);
    }

    function hideCard() {
      card.hidden = true;
      card.removeAttribute("data-technique");
      cy.resize();
      cy.nodes(":selected").unselect();
    }

    function select(id) {
      var node = cy.getElementById(id);
      if (!node || node.empty()) return;
      if (node.hasClass("hidden")) setCategoryVisible(node.data("category"), true);
      cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 1.1) }, { duration: 250 });
      showCard(id);
    }

    // -- search ------------------------------------------------------------------------
    var query = "";

    function matches(q) {
      var needle = fold(q).trim();
      if (!needle) return [];
      return techniques.filter(function (n) {
        if (n.hasClass("hidden")) return false;
        var d = n.data();
        return [d.name, d.name_zh, d.slug, d.aliases, d.organisation, d.people, d.category_label]
          .some(function (v) { return fold(v).indexOf(needle) !== -1; });
      }).sort(function (a, b) {
        return rank(a, needle) - rank(b, needle) || a.data("name").localeCompare(b.data("name"));
      });
    }

    function rank(node, needle) {
      var name = fold(node.data("name"));
      if (name.indexOf(needle) === 0) return 0;
      if (name.indexOf(needle) !== -1) return 1;
      if ([node.data("slug"), node.data("aliases"), node.data("name_zh")]
        .some(function (v) { return fold(v).indexOf(needle) !== -1; })) return 2;
      return 3;
    }

    function applySearchMarks() {
      cy.nodes().removeClass("match");
      if (!query.trim()) return;
      var found = matches(query);
      cy.batch(function () {
        cy.elements().not(".category").addClass("faded");
        found.removeClass("faded").addClass("match");
        found.parents().removeClass("faded");
      });
    }

    function search(q) {
      query = q || "";
      clearMarks();
      applySearchMarks();
      var found = query.trim() ? matches(query) : cy.collection();
      results.textContent = "";
      results.hidden = !query.trim();
      if (!query.trim()) return [];
      if (found.empty()) {
        results.appendChild(el("li", "tkg-none", "No technique matches “" + query + "”."));
      }
      found.slice(0, 12).forEach(function (n) {
        var li = el("li", "tkg-result");
        li.setAttribute("role", "option");
        li.setAttribute("data-id", n.id());
        li.appendChild(el("span", "tkg-result-name", n.data("name")));
        li.appendChild(el("span", "tkg-result-meta", n.data("category_label")));
        li.addEventListener("mousedown", function (evt) { evt.preventDefault(); pick(n.id()); });
        results.appendChild(li);
      });
      return found.map(function (n) { return n.id(); });
    }

    function pick(id) {
      results.hidden = true;
      select(id);
    }

    input.addEventListener("input", function () { search(input.value); });
    input.addEventListener("keydown", function (evt) {
      if (evt.key === "Enter") {
        var first = results.querySelector("li.tkg-result");
        if (first) pick(first.getAttribute("data-id"));
      } else if (evt.key === "Escape") {
        input.value = "";
        search("");
      }
    });
    input.addEventListener("blur", function () { results.hidden = true; });
    input.addEventListener("focus", function () { if (query.trim()) results.hidden = false; });

    // -- category filter ---------------------------------------------------------------
    var chips = {};

    function setCategoryVisible(id, visible) {
      hiddenCategories[id] = !visible;
      var parent = cy.getElementById("category:" + id);
      var members = parent.children();
      cy.batch(function () {
        if (visible) {
          parent.union(members).removeClass("hidden");
          members.connectedEdges().forEach(function (e) {
            if (!e.source().hasClass("hidden") && !e.target().hasClass("hidden")) e.removeClass("hidden");
          });
        } else {
          parent.union(members).union(members.connectedEdges()).addClass("hidden");
        }
      });
      if (chips[id]) chips[id].setAttribute("aria-pressed", visible ? "true" : "false");
      var open = card.getAttribute("data-technique");
      if (!visible && open && cy.getElementById(open).hasClass("hidden")) hideCard();
      if (query.trim()) search(query);
    }

    (data.categories || []).forEach(function (c) {
      var chip = el("button", "tkg-chip");
      chip.type = "button";
      chip.setAttribute("aria-pressed", "true");
      chip.setAttribute("data-category", c.id);
      chip.style.setProperty("--chip", c.colour);
      chip.style.setProperty("--chip-fill", c.fill);
      chip.appendChild(el("span", "tkg-dot"));
      chip.appendChild(el("span", null, c.label));
      chip.appendChild(el("span", "tkg-count", c.count));
      chip.addEventListener("click", function () { setCategoryVisible(c.id, !!hiddenCategories[c.id]); });
      chips[c.id] = chip;
      filters.appendChild(chip);
    });

    // On a phone, fitting the whole lineage would shrink its labels below reading size (a
    // 390 px screen gives about 2 px): there it opens at a legible zoom on the top left of the
    // drawing, and the reader drags to move around (the Fit button still shows all of it).
    var LEGIBLE_PX = 11, NARROW_PX = 600;
    function legibleZoom() {
      var size = techniques.length ? techniques[0].pstyle("font-size").pfValue : 10;
      return LEGIBLE_PX / (size || 10);
    }
    function fitAll() {
      cy.resize();
      var visible = cy.elements(":visible");
      cy.fit(visible, 24);
      if (canvas.clientWidth < NARROW_PX && cy.zoom() < legibleZoom()) {
        var box = visible.boundingBox();
        cy.zoom(Math.min(legibleZoom(), cy.maxZoom()));
        cy.pan({ x: 24 - box.x1 * cy.zoom(), y: 24 - box.y1 * cy.zoom() });
        var tip = container.querySelector(".tkg-hint");
        if (tip && tip.textContent.indexOf("Drag") < 0) tip.textContent = "Drag to move around; Fit shows it all. " + tip.textContent;
      }
    }
    fitButton.addEventListener("click", function () {
      cy.animate({ fit: { eles: cy.elements(":visible"), padding: 24 } }, { duration: 250 });
    });
    // Fit once the frame has its final size, and again whenever the window changes size.
    var resizing = null;
    window.addEventListener("resize", function () {
      window.clearTimeout(resizing);
      resizing = window.setTimeout(fitAll, 120);
    });
    window.requestAnimationFrame(fitAll);

    var view = {
      cy: cy,
      search: search,
      select: select,
      showCard: showCard,
      hideCard: hideCard,
      setCategoryVisible: setCategoryVisible,
      visibleTechniques: function () { return techniques.filter(function (n) { return !n.hasClass("hidden"); }).length; }
    };
    TechKGLineage.views.push(view);
    return view;
  }

  window.TechKGLineage = { mount: mount, views: [] };
})();
