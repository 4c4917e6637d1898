/* TechKG workbench: small enhancements over server-rendered pages, which work without it.
 * - filter forms submit as soon as a choice changes (the search box after a pause);
 * - the technique cards' "compare" ticks feed the Compare button (2 to 4); the Compare
 *   pickers suggest techniques as one types (/compare/choices);
 * - a reading-status change is saved in place (POST /reading/status) and the progress
 *   bars follow;
 * - copy buttons; bar widths from data-w (the page's CSP allows no inline styles);
 * - deleting a note asks first.
 * Text from the graph only ever reaches the page through textContent.
 */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function all(selector, root) { return Array.prototype.slice.call((root || document).querySelectorAll(selector)); }

  function formKey() {
    var meta = document.querySelector('meta[name="techkg-form-key"]');
    return meta ? meta.getAttribute("content") : "";
  }

  function widths(root) {
    all("[data-w]", root).forEach(function (el) {
      var w = parseFloat(el.getAttribute("data-w"));
      el.style.width = (isFinite(w) ? Math.max(0, Math.min(100, w)) : 0) + "%";
    });
  }

  // -- filter forms --------------------------------------------------------------------
  all("form.filters").forEach(function (form) {
    var timer = null;
    function submit() {
      // Leave empty fields out of the URL so it stays short and shareable.
      all("input, select", form).forEach(function (el) {
        if (el.name && !el.value) el.disabled = true;
      });
      form.submit();
    }
    all("select, input[type=checkbox]", form).forEach(function (el) {
      el.addEventListener("change", submit);
    });
    all("input[type=search]", form).forEach(function (input) {
      input.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(submit, 450);
      });
      if (input.hasAttribute("autofocus")) {
        var end = input.value.length;
        input.focus();
        try { input.setSelectionRange(end, end); } catch (e) { /* not a text input */ }
      }
    });
  });

  // A page restored from the back-forward cache keeps the fields disabled above.
  window.addEventListener("pageshow", function () {
    all("form.filters [disabled]").forEach(function (el) { el.disabled = false; });
  });

  // -- compare pickers: suggestions as one types ------------------------------------------
  // The page lists only some techniques when the lineage holds thousands; the others
  // come from /compare/choices?q= (a few at a time) into the pickers' shared datalist.
  var choiceList = document.getElementById("technique-choices");
  all("input[data-choices]").forEach(function (input) {
    var timer = null, asked = 0;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var mine = ++asked;
        fetch(input.getAttribute("data-choices") + "?q=" + encodeURIComponent(input.value.trim()),
              { headers: { Accept: "application/json" } })
          .then(function (r) { return r.ok ? r.json() : []; })
          .then(function (found) {
            if (mine !== asked || !choiceList) return;  // a later keystroke asked again
            choiceList.textContent = "";
            found.forEach(function (c) {
              var option = document.createElement("option");
              option.value = c.id;
              option.label = c.name + " · " + c.category + (c.onPage ? "" : " (lineage-only)");
              option.textContent = c.name;
              choiceList.appendChild(option);
            });
          })
          .catch(function () { /* the typed name is looked up on submit anyway */ });
      }, 200);
    });
  });

  // -- compare picks on the technique cards ---------------------------------------------
  var compareForm = document.getElementById("compare-form");
  if (compareForm) {
    var go = document.getElementById("compare-go");
    var boxes = all('input[name="t"][form="compare-form"]');
    var update = function () {
      var picked = boxes.filter(function (b) { return b.checked; });
      go.disabled = picked.length < 2 || picked.length > 4;
      go.querySelector(".n").textContent = picked.length ? "(" + picked.length + ")" : "";
      boxes.forEach(function (b) {
        b.disabled = !b.checked && picked.length >= 4;
        var card = b.closest(".card");
        if (card) card.classList.toggle("picked", b.checked);
      });
    };
    boxes.forEach(function (b) { b.addEventListener("change", update); });
    update();
  }

  // -- reading status ----------------------------------------------------------------
  var KEYS = ["read", "reading", "to-read", "skipped"];

  function bucket(status) { return KEYS.indexOf(status) >= 0 ? status : "other"; }

  function redraw(section) {
    var total = parseInt(section.getAttribute("data-total"), 10) || 0;
    ["read", "reading", "to-read", "skipped", "other"].forEach(function (key) {
      var n = parseInt(section.getAttribute("data-" + key), 10) || 0;
      var seg = section.querySelector('.seg[data-key="' + key + '"]');
      if (seg) seg.setAttribute("data-w", total ? (100 * n / total).toFixed(2) : "0");
      var label = section.querySelector(".n-" + key);
      if (label) label.textContent = String(n);
    });
    var bar = section.querySelector(".progress");
    if (bar) bar.setAttribute("aria-valuenow", section.getAttribute("data-read") || "0");
    widths(section);
    var index = Array.prototype.indexOf.call(all("section.rcat"), section);
    var toc = all(".toc .fill")[index];
    if (toc && total) {
      toc.setAttribute("data-w", (100 * (parseInt(section.getAttribute("data-read"), 10) || 0) / total).toFixed(2));
      widths(toc.parentNode);
    }
  }

  function applyChange(paper, status, previous) {
    all("li.paper").forEach(function (li) {
      if (li.getAttribute("data-paper") !== paper) return;
      li.setAttribute("data-status", status);
      var select = li.querySelector("select.status-select");
      if (select) {
        if (!Array.prototype.some.call(select.options, function (o) { return o.value === status; })) {
          var option = document.createElement("option");
          option.value = status;
          option.textContent = status;
          select.appendChild(option);
        }
        select.value = status;
        select.setAttribute("data-current", status);
        select.className = "status-select st-" + status;
      }
      var section = li.closest("section.rcat");
      if (section && previous !== status) {
        if (previous) {
          var before = "data-" + bucket(previous);
          section.setAttribute(before, String(Math.max(0, (parseInt(section.getAttribute(before), 10) || 0) - 1)));
        } else {
          section.setAttribute("data-total", String((parseInt(section.getAttribute("data-total"), 10) || 0) + 1));
        }
        var after = "data-" + bucket(status);
        section.setAttribute(after, String((parseInt(section.getAttribute(after), 10) || 0) + 1));
        redraw(section);
      }
    });
    var total = document.getElementById("read-total");
    if (total && previous !== status) {
      var n = parseInt(total.textContent, 10) || 0;
      if (status === "read") n += 1;
      if (previous === "read") n -= 1;
      total.textContent = String(n);
    }
  }

  all("form.status-form").forEach(function (form) {
    var select = form.querySelector("select.status-select");
    var saved = form.querySelector(".saved");
    if (!select) return;
    select.setAttribute("data-current", select.value);
    select.addEventListener("change", function () {
      var body = new URLSearchParams();
      all("input[type=hidden]", form).forEach(function (el) { body.append(el.name, el.value); });
      body.append("status", select.value);
      select.disabled = true;
      saved.classList.remove("failed");
      saved.textContent = "saving…";
      fetch(form.getAttribute("action"), {
        method: "POST",
        credentials: "same-origin",
        headers: { "Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded",
                   "X-TechKG-Form-Key": formKey() },
        body: body.toString()
      }).then(function (response) {
        return response.json().then(function (data) { return { ok: response.ok, data: data }; });
      }).then(function (answer) {
        select.disabled = false;
        if (!answer.ok || !answer.data.ok) throw new Error((answer.data && answer.data.error) || "not saved");
        applyChange(answer.data.paper, answer.data.status, answer.data.previous);
        saved.textContent = "saved";
        form.closest("li.paper") && form.closest("li.paper").setAttribute("data-saved", answer.data.at);
      }).catch(function (error) {
        select.disabled = false;
        select.value = select.getAttribute("data-current") || "";
        saved.classList.add("failed");
        saved.textContent = String(error.message || error);
      });
    });
  });

  // -- copy buttons --------------------------------------------------------------------
  all("[data-copy-from]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.querySelector(button.getAttribute("data-copy-from"));
      if (!source) return;
      var text = button.getAttribute("data-copy-kind") === "href" ? source.href : source.textContent;
      var done = function () {
        var label = button.textContent;
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = label; }, 1500);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { select(source); });
      } else {
        select(source);
      }
    });
  });

  function select(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // -- notes: deleting one asks first (kg undo brings it back) ---------------------------
  all("button.delete-note").forEach(function (button) {
    button.addEventListener("click", function (event) {
      if (!window.confirm("Delete this note? kg undo brings it back.")) event.preventDefault();
    });
  });

  widths(document);
})();
