"""The relation a name's wording reads as: introduces, extends, uses, evaluates or mentions.

Within the sentence that names the technique:

- a cue right after the name wins: ``GQA-based`` and ``X is used`` read *uses*,
  ``X baselines`` *evaluates*, ``X-like`` *extends*;
- else the nearest cue before it, within a few words that hold no comma, clause word
  ("which", "while", ...) or sentence break: "we propose / introduce / present X" or "a
  method called X" *introduces*, "we extend / generalise / build on / improve X"
  *extends*, "trained with / using / based on / on top of X" *uses*, "compared with /
  outperforms / than / evaluate X" *evaluates*;
- a title that is the name, or opens with it and a colon ("GQA: Training ..."),
  introduces it; one that opens with a new name made of it ("ZeRO-Offload: ...") extends
  it, as does proposing such a name ("we present ZeRO-Infinity");
- "such as X", "unlike X", "instead of X", "existing X" read *mentions*: X stands as an
  example, a contrast or the past, not as the paper's method; a comparison or a contrast
  before a name that only qualifies a phrase ("exceeding PPO-based RLHF") governs it;
- introducing a new name opened by a word of its own ("we introduce Dr. GRPO") extends the
  known name in it; in a text that introduces something, a name the sentence then says
  extends another ("KDA, which extends Gated DeltaNet") is the new one: introduces;
- otherwise: *uses* in a title (a title names what the paper works with), a reading-list
  "why" text or a Zotero tag; *uses* in a sentence with a method signal ("we", "our",
  "this paper", or the name the paper gives its own work: :func:`own_names`); *mentions*
  everywhere else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Reading", "own_names", "read_relation", "sentence_bounds"]

_WORDS = r"(?:\S+\s+)"
_PRE: tuple[tuple[str, str, int], ...] = (
    # (relation, cue, most words between the cue and the name)
    ("introduces", r"(?:we|this (?:paper|work|report|article)|here(?:,)? we|in this (?:paper|work),? we|authors?)"
                   r"\s+(?:\w+\s+){0,2}?(?:propose|present|introduce|develop|design|describe|unveil|release)[sd]?"
                   r"|introducing|propose[sd]?|提出", 6),
    ("introduces", r"called|named|dubbed|termed|coined", 1),
    ("extends", r"improv(?:e|es|ed|ing)", 1),
    ("extends", r"extend(?:s|ed|ing)?|extensions? (?:of|to)|generali[sz](?:e|es|ed|ing)|generali[sz]ations? of"
                r"|improv(?:e|es|ed|ing) (?:up)?on|improvements? (?:to|of|on)|buil(?:d|ds|t|ding) (?:up)?on"
                r"|enhanc(?:e|es|ed|ing)|augment(?:s|ed|ing)?|refin(?:e|es|ed|ing)|modif(?:y|ies|ied|ying)"
                r"|variants? of|upgrad(?:e|es|ed|ing)|revisit(?:s|ed|ing)?|successors? (?:to|of)|inspired by"
                r"|扩展|改进", 4),
    ("evaluates", r"compar(?:e|es|ed|ing)(?: \w+){0,3}? (?:with|to|against)|comparisons? (?:with|to|against|of)"
                  r"|versus|vs\.?|outperform(?:s|ed|ing)?|surpass(?:es|ed|ing)?|exceed(?:s|ed|ing)?|beat(?:s|ing)?"
                  r"|than|against"
                  r"|relative to|over|baselines?(?: such as| like| including)?|evaluat(?:e|es|ed|ing)"
                  r"|evaluations? of|benchmark(?:s|ed|ing)?|analy[sz](?:e|es|ed|ing)|analysis of|stud(?:y|ies|ied|ying)"
                  r"|measur(?:e|es|ed|ing)|characteri[sz](?:e|es|ed|ing)|profil(?:e|es|ed|ing)|examin(?:e|es|ed|ing)"
                  r"|investigat(?:e|es|ed|ing)|reproduc(?:e|es|ed|ing)|close to|comparable (?:to|with)|similar to"
                  r"|on par with|match(?:es|ed|ing)?|speedups? (?:over|of)|对比|比较|优于", 3),
    ("mentions", r"unlike|in contrast to|as opposed to|instead of|rather than|without|alternatives? to"
                 r"|replac(?:e|es|ed|ing)|beyond", 3),
    ("example", r"such as|e\.g\.,?|for example|for instance|including|like", 3),
    ("uses", r"us(?:e|es|ed|ing)|utili[sz](?:e|es|ed|ing)|employ(?:s|ed|ing)?|adopt(?:s|ed|ing)?"
             r"|leverag(?:e|es|ed|ing)|appl(?:y|ies|ied|ying)|rel(?:y|ies|ied|ying) on|based on|on top of|with|via"
             r"|through|powered by|equipped with|train(?:s|ed|ing)?(?: \w+){0,2}? (?:with|using|on)"
             r"|fine-?tun(?:e|es|ed|ing)(?: \w+){0,2}? (?:with|using)|optimi[sz](?:e|es|ed|ing) (?:with|by|using)"
             r"|implement(?:s|ed|ing)? (?:in|with|using)|written in|runs? on|deploy(?:s|ed|ing)? (?:with|on)"
             r"|integrat(?:e|es|ed|ing)|incorporat(?:e|es|ed|ing)|combin(?:e|es|ed|ing)|accelerat(?:e|es|ed|ing)"
             r"|scal(?:e|es|ed|ing)|for|基于|采用|使用|利用|结合", 3),
)
_PRE_PATTERNS = tuple((relation, re.compile(rf"(?<![A-Za-z0-9])(?:{cue})(?![A-Za-z0-9])", re.IGNORECASE), gap)
                      for relation, cue, gap in _PRE)
#: Every cue in one expression (a group per cue, in the order above: the first that fits
#: at a place wins, so "compared with" is read before "with").
_CUES = re.compile("|".join(rf"(?P<c{i}>(?<![A-Za-z0-9])(?:{cue})(?![A-Za-z0-9]))"
                            for i, (_relation, cue, _gap) in enumerate(_PRE)), re.IGNORECASE)
#: How far before a name the wording is read (a cue and the few words after it), and
#: the marks that end a sentence.
_REACH = 160
_STOP = re.compile(r"[。！？；\n]|[.!?](?=\s)")
_POST: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("uses", re.compile(r"^[\-‐ ](?:based|powered|enabled|driven|accelerated|aware|compatible|backed|equipped|"
                        r"trained|optimi[sz]ed|tuned|style training)(?![A-Za-z])", re.IGNORECASE)),
    ("extends", re.compile(r"^[\-‐ ](?:like|style|inspired|variant|variants)(?![A-Za-z])", re.IGNORECASE)),
    ("uses", re.compile(r"^\W{0,3}(?:is|are|was|were|has been|have been) (?:\w+ )?(?:used|employed|adopted|applied|"
                        r"leveraged|integrated|incorporated)\b", re.IGNORECASE)),
    ("uses", re.compile(r"^\W{0,3}(?:as|for) (?:the |our |a |its )?(?:backbone|optimi[sz]er|base model|foundation|"
                        r"framework|training framework|building block)\b", re.IGNORECASE)),
    ("evaluates", re.compile(r"^\W{0,3}(?:baselines?|as (?:a |the )?baselines?)\b", re.IGNORECASE)),
    ("introduces", re.compile(r"^\W{0,3}(?:is|was) (?:newly )?(?:proposed|introduced|presented)\b", re.IGNORECASE)),
    ("introduces", re.compile(r"^\s*(?:\([^)]{1,40}\))?\s*,\s+(?:a|an)\s+(?:new|novel)\b", re.IGNORECASE)),
)
#: The first _POST readings are the adjectives ("-based", "-like") a comparison before the name overrides.
_ADJECTIVES = 2
#: A coined name: a capitalised token with capitals or digits inside ("DeepSeek-V3",
#: "Kimi Linear", "GShard"), one to three words.
_NAME = r"([A-Z][A-Za-z0-9.\-]*(?: [A-Z0-9][A-Za-z0-9.\-]*){0,2})"
_COINED = re.compile(r"[A-Z][A-Za-z0-9.\-]*(?:[a-z][A-Z]|[0-9])[A-Za-z0-9.\-]*")
_TITLE_NAME = re.compile(rf"{_NAME}(?:\s*:|\s+(?:Technical Report|System Card|Model Card)\b)")
_PRESENTED = re.compile(r"(?<![A-Za-z])(?:we|this (?:paper|work|report))\s+(?:\w+\s+){0,2}?"
                        rf"(?:propose|present|introduce|release|unveil|describe)[sd]?\s+{_NAME}\s*[,(:]",
                        re.IGNORECASE)
_BLOCK = re.compile(r"[,;:.!?。；]|(?<![A-Za-z])(?:which|that|while|whereas|but|although|though|however|where|when|"
                    r"whose|unlike|instead)(?![A-Za-z])", re.IGNORECASE)
_METHOD = re.compile(r"(?<![A-Za-z])(?:we|our|us|this (?:paper|work|report|article)|the proposed|in this work)"
                     r"(?![A-Za-z])", re.IGNORECASE)
_GENERIC_SUFFIX = re.compile(
    r"^[\-‐](?:based|like|style|inspired|aware|free|enabled|powered|driven|compatible|friendly|specific|only|level|"
    r"wise|scale|sized|size|type|heavy|centric|oriented|related|bound|induced|guided|augmented|accelerated|"
    r"equipped|backed|tuned|trained|optimi[sz]ed|variant|variants|family|models?|layers?|blocks?|architecture|"
    r"\d+[A-Za-z]?)(?![A-Za-z0-9])", re.IGNORECASE)
_COMPOUND = re.compile(r"^[\-‐][A-Za-z][A-Za-z0-9]*")
#: What may follow a name that makes a whole title: a remark in brackets, punctuation.
_TITLE_REST = re.compile(r"\([^)]*\)|[\s.!?\"'”’)\]]")
#: Words a dot ends without ending the sentence or the clause ("e.g.", "et al.", "Dr. GRPO").
_ABBREVIATIONS = frozenset({"e.g", "i.e", "al", "vs", "cf", "fig", "figs", "eq", "eqs", "sec", "approx", "resp",
                            "etc", "dr", "mr", "ms", "prof"})
_ABBREVIATION_DOT = re.compile(r"(?<![A-Za-z.])(?:e\.g|i\.e|al|vs|cf|figs?|eqs?|sec|approx|resp|etc|dr|mr|ms|prof)"
                               r"\.(?=\s)", re.IGNORECASE)
#: A capitalised word that opens a new name right before a known one ("Dr. GRPO",
#: "Adaptive GQA"), but not an article or a determiner.
_MODIFIER = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z0-9]*\.?)[ \-‐]$")
_NOT_MODIFIERS = frozenset({"A", "An", "The", "Our", "This", "These", "That", "Its", "Their", "We", "In", "On",
                            "With", "For", "And", "Or", "To", "Of", "By", "As", "At"})
#: A name the sentence then says extends, improves or generalises something: the paper's new method.
_EXTENDING = re.compile(r"^\s*(?:\([^)]{1,40}\))?\s*,\s+(?:(?:a|an)\s+(?:[\w\-]+\s+){0,5}?(?:that|which)|which|that)"
                        r"\s+(?:extends|generali[sz]es|improves (?:up)?on|builds (?:up)?on|augments|enhances)\b",
                        re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    relation: str
    explicit: bool


def sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence of ``text`` around ``start:end``."""
    left = 0
    for m in _STOP.finditer(text, max(0, start - _REACH), start):
        if m.group(0) in ".!?" and _abbreviation(text, m.start()):
            continue
        left = m.end()
    right = len(text)
    for m in _STOP.finditer(text, end):
        if m.group(0) in ".!?" and _abbreviation(text, m.start()):
            continue
        right = m.end()
        break
    return left, right


def _abbreviation(text: str, dot: int) -> bool:
    word = re.search(r"[A-Za-z.]*$", text[max(0, dot - 8):dot])
    return (word is not None and word.group(0).lower() in _ABBREVIATIONS) or (
        dot >= 1 and text[dot - 1].isdigit() and text[dot + 1:dot + 2].isdigit())


def _speaks(sentence: str, name: str, before: int) -> bool:
    """The paper's own ``name`` stands in ``sentence`` before offset ``before`` (its subject)."""
    at = sentence.find(name, 0, before)
    return at >= 0 and not sentence[at + len(name):at + len(name) + 1].isalnum()


def _modified(sentence: str, start: int) -> bool:
    """A capitalised word opens the name the sentence introduces ("we introduce Dr. GRPO"):
    a new name made of the known one."""
    m = _MODIFIER.search(sentence[max(0, start - 30):start])
    return m is not None and m.group(1).rstrip(".") not in _NOT_MODIFIERS


def compound(text: str, end: int) -> str | None:
    """The new name made of the name ending at ``end`` and what follows it ("ZeRO-Offload"),
    or None where what follows is a plain suffix ("-based", "-3") or nothing."""
    rest = text[end:end + 40]
    if _GENERIC_SUFFIX.match(rest):
        return None
    m = _COMPOUND.match(rest)
    return m.group(0) if m else None


def _pre_cue(sentence: str, name_start: int) -> tuple[str, int] | None:
    """The nearest cue before the name (relative offset ``name_start`` in ``sentence``)
    with only a few unblocked words between: (relation, words between). An example cue
    ("such as X", "e.g. X") passes the name on to the cue before it ("we use attention
    variants such as X" uses X); with none, X is only mentioned."""
    low = max(0, name_start - _REACH)
    head = sentence[:name_start]
    best: tuple[int, int, str, int] | None = None
    for m in _CUES.finditer(head, low):
        order = int((m.lastgroup or "c0")[1:])
        relation, _pattern, most = _PRE_PATTERNS[order]
        gap = head[m.end():]
        if _BLOCK.search(_ABBREVIATION_DOT.sub(" ", gap)):
            continue
        words = len(gap.split())
        if words > most:
            continue
        key = (words, order)
        if best is None or key < best[:2]:
            best = (words, order, relation, m.start())
    if best is None:
        return None
    if best[2] == "example":
        before = _pre_cue(sentence, best[3])
        if before is not None and before[1] + best[0] <= 6:
            return before
        return "mentions", best[0]
    return best[2], best[0]


def own_names(title: str, abstract: str) -> tuple[str, ...]:
    """The names a paper gives its own work: what opens its title before a colon or as a
    report's name ("DeepSeek-V3 Technical Report") and comes back in its abstract, and what
    it presents ("We present
    DeepSeek-V3, ..."). A sentence with one of them as its subject speaks for the paper,
    as "we" does."""
    found = []
    m = _TITLE_NAME.match(title.strip())
    if m and (m.group(1) in abstract or _COINED.fullmatch(m.group(1))):
        # a name the abstract calls the work by, or one coined word ("DanceGRPO"), not a heading
        found.append(m.group(1))
    found += [m.group(1) for m in _PRESENTED.finditer(abstract)]
    return tuple(dict.fromkeys(n for n in found if len(n) >= 3 and n not in _NOT_MODIFIERS))


def read_relation(text: str, start: int, end: int, field: str, own: tuple[str, ...] = ()) -> Reading:
    """The relation the wording around ``text[start:end]`` (a name found in ``field``) reads;
    ``own`` are the paper's names for its own work (:func:`own_names`)."""
    made = compound(text, end)
    if field == "title":
        lead = text[:start].strip(" \"'“‘([")
        after = text[end + (len(made) if made else 0):].lstrip()
        if not lead and after.startswith((":", "：", " -", "—")):
            return Reading("extends" if made else "introduces", True)
        if not lead and not made and not _TITLE_REST.sub("", after):
            return Reading("introduces", True)  # the title is the name: the technique's own document
    left, right = sentence_bounds(text, start, end)
    sentence = text[left:right]
    rel_start, rel_end = start - left, end - left
    tail = sentence[rel_end + (len(made) if made else 0):]
    found = _pre_cue(sentence, rel_start)
    for order, (relation, pattern) in enumerate(_POST):
        if pattern.match(sentence[rel_end:]) or (made and pattern.match(tail)):
            if order < _ADJECTIVES and found is not None and found[0] in ("evaluates", "mentions"):
                # "exceeding PPO-based RLHF", "unlike GQA-style models": the comparison or the
                # contrast governs the phrase the name only qualifies.
                return Reading(found[0], True)
            return Reading(relation, True)
    if _EXTENDING.match(sentence[rel_end:]) and _PRE_PATTERNS[0][1].search(text):
        # "We introduce Kimi Linear ... Kimi Delta Attention (KDA), which extends Gated
        # DeltaNet": what extends another technique in a paper that introduces is the new one.
        return Reading("introduces", True)
    if found is not None:
        relation, _words = found
        if relation == "introduces" and (made or _modified(sentence, rel_start)):
            return Reading("extends", True)
        return Reading(relation, True)
    if field in ("title", "reading-list-why", "zotero-tag"):
        return Reading("uses", False)
    if field in ("abstract", "tldr", "zotero-note") and (
            _METHOD.search(sentence) or any(_speaks(sentence, name, rel_start) for name in own)):
        return Reading("uses", False)
    return Reading("mentions", False)
