"""Papers linked to the techniques they introduce, extend, use, evaluate or mention.

The pure logic comes first, each step a small module that knows nothing of the store:

- :mod:`kg.linking.model`: relations, fields, statuses, evidence and links;
- :mod:`kg.linking.names`: the names a technique is known by, and what kind of name each
  is (a phrase, an acronym, a coined name such as "DeltaNet", a common word such as
  "Transformer");
- :mod:`kg.linking.patterns`: the multi-pattern matcher (Aho-Corasick over text with
  hyphens, spacing and case folded; acronyms and words as written, on word boundaries);
- :mod:`kg.linking.context`: whether a name found means the technique (domain, confirming
  and vetoing cues, arXiv categories, the acronym's own expansion in the text);
- :mod:`kg.linking.relations`: the relation read from the wording around a name;
- :mod:`kg.linking.linker`: a paper's texts to scored links with their evidence;
- :mod:`kg.linking.citing`: links from citations (methodology intent, influence, a
  citation sentence that names the technique).

Then the store: :mod:`kg.linking.reads` reads techniques, papers' texts and citations;
:mod:`kg.linking.write` writes the ``links`` graph (all of it, or the links of some
papers) in its own transaction; :mod:`kg.linking.decisions` keeps the reader's verdicts
and threshold in ``link-decisions``; :mod:`kg.linking.listing` lists links with their
status; :mod:`kg.linking.refresh` finds what a write changed and links just that.
"""
