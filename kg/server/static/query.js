/* TechKG workbench, Query page: a SPARQL editor over /sparql and the named queries at
 * /queries/{name}. Picking a named query loads its text (/queries/{name}.rq) and its
 * parameters; while the text is unchanged, Run calls the named query with them, and
 * once edited, Run sends the text to /sparql. Results are drawn with textContent. */
(function () {
  "use strict";
  var ACCEPT = "application/sparql-results+json, text/turtle;q=0.9, application/json;q=0.8";
  var TECHNIQUE = "https://w3id.org/techkg/id/technique/";

  var library = JSON.parse(document.getElementById("query-library").textContent);
  var byName = {};
  library.forEach(function (q) { byName[q.name] = q; });

  var named = document.getElementById("named");
  var editor = document.getElementById("sparql");
  var params = document.getElementById("params");
  var form = document.getElementById("query-form");
  var mode = document.getElementById("run-mode");
  var status = document.getElementById("query-status");
  var table = document.getElementById("results");
  var graph = document.getElementById("graph-result");
  var csv = document.getElementById("csv-link");
  var info = document.getElementById("named-info");
  var loaded = null;

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function usingNamed() { return loaded !== null && editor.value === loaded.text; }

  function namedUrl(format) {
    var query = new URLSearchParams();
    Array.prototype.forEach.call(params.querySelectorAll("input"), function (input) {
      if (input.value.trim()) query.append(input.name, input.value.trim());
    });
    if (format) query.append("format", format);
    var text = query.toString();
    return "/queries/" + encodeURIComponent(loaded.name) + (text ? "?" + text : "");
  }

  function updateMode() {
    var on = usingNamed();
    params.hidden = !on;
    csv.hidden = !on;
    if (on) {
      mode.textContent = "runs the named query " + loaded.name + " with the parameters above";
      csv.href = namedUrl("csv");
    } else {
      mode.textContent = "runs the text above against /sparql";
    }
  }

  function choose(name) {
    var q = byName[name];
    if (!q) return;
    info.hidden = false;
    document.getElementById("named-title").textContent = q.title;
    document.getElementById("named-description").textContent = q.description;
    params.textContent = "";
    q.params.forEach(function (p) {
      var field = el("div", null, "field");
      var id = "param-" + p.name;
      var label = el("label", p.name + (p.required ? " *" : ""));
      label.setAttribute("for", id);
      var input = el("input");
      input.type = "text";
      input.id = id;
      input.name = p.name;
      input.placeholder = p.default !== null && p.default !== undefined ? p.default : p.type;
      if (p.required) input.required = true;
      input.addEventListener("input", updateMode);
      field.appendChild(label);
      field.appendChild(input);
      field.appendChild(el("small", p.type + " · " + p.description));
      params.appendChild(field);
    });
    status.textContent = "Loading " + name + "…";
    fetch("/queries/" + encodeURIComponent(name) + ".rq").then(function (response) {
      if (!response.ok) throw new Error("cannot load the query " + name);
      return response.text();
    }).then(function (text) {
      editor.value = text;
      loaded = { name: name, text: text };
      status.textContent = "";
      status.classList.remove("error");
      updateMode();
      history.replaceState(null, "", "/query?name=" + encodeURIComponent(name));
    }).catch(function (error) { fail(String(error.message || error)); });
  }

  function fail(message, hint) {
    status.textContent = "";
    status.classList.add("error");
    status.appendChild(el("strong", message));
    if (hint) status.appendChild(el("span", " " + hint, "hint"));
    table.hidden = true;
    graph.hidden = true;
  }

  function cell(binding) {
    var td = el("td");
    if (!binding) return td;
    if (binding.type === "uri" && binding.value.indexOf(TECHNIQUE) === 0) {
      var a = el("a", binding.value.slice(TECHNIQUE.length));
      a.href = "/techniques/" + encodeURIComponent(binding.value.slice(TECHNIQUE.length));
      a.title = binding.value;
      td.appendChild(a);
    } else if (binding.type === "uri" && /^https?:\/\//i.test(binding.value)) {
      var link = el("a", binding.value);
      link.href = binding.value;
      link.rel = "noopener noreferrer";
      td.appendChild(link);
    } else {
      td.textContent = binding.value;
    }
    return td;
  }

  function show(data, ms) {
    status.classList.remove("error");
    graph.hidden = true;
    if (typeof data.boolean === "boolean") {
      table.hidden = true;
      status.textContent = "ASK: " + data.boolean + " · " + ms + " ms";
      return;
    }
    var vars = data.head.vars || [];
    var rows = data.results.bindings || [];
    var head = table.querySelector("thead");
    var body = table.querySelector("tbody");
    head.textContent = "";
    body.textContent = "";
    var tr = el("tr");
    vars.forEach(function (v) { tr.appendChild(el("th", v)); });
    head.appendChild(tr);
    rows.forEach(function (row) {
      var line = el("tr");
      vars.forEach(function (v) { line.appendChild(cell(row[v])); });
      body.appendChild(line);
    });
    table.hidden = false;
    status.textContent = rows.length + (rows.length === 1 ? " row" : " rows") + " · " + ms + " ms";
  }

  function run() {
    var started = performance.now();
    status.classList.remove("error");
    status.textContent = "Running…";
    var request;
    if (usingNamed()) {
      request = fetch(namedUrl(null), { headers: { "Accept": ACCEPT } });
    } else {
      request = fetch("/sparql", {
        method: "POST",
        headers: { "Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded" },
        body: "query=" + encodeURIComponent(editor.value)
      });
    }
    request.then(function (response) {
      var type = response.headers.get("content-type") || "";
      var ms = Math.round(performance.now() - started);
      if (!response.ok) {
        return response.text().then(function (text) {
          var message = text, hint = "";
          try { var data = JSON.parse(text); message = data.error || text; hint = data.hint || ""; } catch (e) { /* text */ }
          fail("Error " + response.status + ": " + message, hint);
        });
      }
      if (type.indexOf("json") >= 0) {
        return response.json().then(function (data) { show(data, ms); });
      }
      return response.text().then(function (text) {
        table.hidden = true;
        graph.hidden = false;
        graph.textContent = text;
        status.textContent = "Graph result · " + ms + " ms";
      });
    }).catch(function (error) { fail(String(error.message || error)); });
  }

  named.addEventListener("change", function () { choose(named.value); });
  editor.addEventListener("input", updateMode);
  form.addEventListener("submit", function (evt) { evt.preventDefault(); run(); });
  editor.addEventListener("keydown", function (evt) {
    if (evt.key === "Enter" && (evt.ctrlKey || evt.metaKey)) { evt.preventDefault(); run(); }
  });
  if (named.value) choose(named.value);
  updateMode();
})();
