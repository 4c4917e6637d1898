/* TechKG workbench, Lineage page: the HTML export's rendering (TechKGLineage.mount) over
 * the live graph; selecting a technique (a click, a search pick or a lineage jump) opens
 * its page on the workbench. */
(function () {
  "use strict";
  var container = document.getElementById("techkg-lineage");
  var data = JSON.parse(document.getElementById("techkg-lineage-data").textContent);
  window.techkgLineage = TechKGLineage.mount(container, data, {
    onSelect: function (id, info) {
      var slug = info && info.slug;
      if (slug) window.location.assign("/techniques/" + encodeURIComponent(slug));
    }
  });
  var hint = container.querySelector(".tkg-hint");
  if (hint) hint.textContent = "Hover a technique to see its lineage; click it to open its page.";
})();
