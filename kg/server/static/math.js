/* TechKG workbench: render the formulas of a page with KaTeX, vendored in /static/katex.
 * The server writes each formula as <span class="math" data-tex="LaTeX">plain notation</span>,
 * so the page reads the same without scripts; here the plain notation gives way to KaTeX. */
(function () {
  "use strict";
  if (!window.katex) return;
  document.querySelectorAll("span.math[data-tex]").forEach(function (span) {
    try {
      window.katex.render(span.getAttribute("data-tex"), span, { throwOnError: true, strict: "ignore" });
      span.classList.add("rendered");
    } catch (error) {
      span.title = "Could not typeset: " + error.message;  /* the plain notation stays */
    }
  });
})();
