"""The precision checker: the last word on a semantic candidate.

The embedding search finds the stored question nearest to the incoming one; nearness is not sameness
("Is it safe to eat raw eggs?" / "Is it not safe...", "capital of Peru" / "capital of Chile" sit at
cosine 0.9 and above). The checker reads the two questions together and says whether one answer serves
both. It is injected into ``SemanticCache`` like the embedder and the store, so alternatives can be
measured side by side (``scripts/eval_cache.py --checker``):

    cross_encoder  (default) a MiniLM cross-encoder fine-tuned here on pairs made by meaning-changing and
                   meaning-keeping edits (``scripts/train_cache_checker.py``, ``data/cache_checker``), run
                   by ONNX Runtime in int8, both orders averaged; a conversation key is read twice
                   (follow-ups, then earlier turns) and the lower score counts. Plus structural rules:
                   the numbers of the two texts (digits and number words) must not conflict, and in
                   conversations one side may not say no where the other does not; and two texts
                   that differ by little more than a word and its WordNet antonym ("more" / "less",
                   "left" / "right", "rational" / "irrational") are different questions
    numbers        the numbers rule alone
    none           accept every candidate above the cosine threshold

``scores(pairs)`` (synchronous, batched) is what the evaluation sweeps; ``check(cached, incoming)`` is
what a lookup awaits: it runs the model on the checker's own thread, never on the event loop.
"""

from __future__ import annotations

import abc
import asyncio
import json
import re
import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from gateway.cache.scope import TURN_SEPARATOR

HERE = Path(__file__).resolve().parent
DEFAULT_MODEL = HERE / "models" / "checker.onnx"
# The shipped judge is an ensemble (issue 44): the first checker (9,195 pairs) and one trained on 54,462
# (checker_b.json says on what); their averaged probability had the best recall at the 1% bound on the
# calibration split of the candidates measured (docs/results/judge_candidates.json).
DEFAULT_MODELS = (DEFAULT_MODEL, HERE / "models" / "checker_b.onnx")
CHECKERS = ("cross_encoder", "numbers", "none")


@dataclass(frozen=True)
class Verdict:
    ok: bool
    score: float  # the checker's score (probability of "same answer" for the cross-encoder)
    reason: str  # why it was rejected ("" when accepted)


class Checker(abc.ABC):
    name: str = "abstract"
    threshold: float = 0.5  # check() accepts score >= threshold

    async def start(self) -> None:  # load models (off the event loop)
        return None

    def close(self) -> None:
        return None

    @abc.abstractmethod
    def scores(self, pairs: Sequence[tuple[str, str]], conversation: bool = False, replies=None) -> np.ndarray:
        """Scores in [0, 1] for (cached, incoming) pairs; higher: more likely one answer serves both.
        ``conversation``: the texts are conversation keys (``scope.conversation_key``)."""

    async def check(
        self, cached: str, incoming: str, conversation: bool = False, replies: tuple[str, str] | None = None
    ) -> Verdict:
        """``replies``: conversations, the assistant turns before the two follow-ups."""
        score = float(self.scores([(cached, incoming)], conversation, [replies])[0])
        return Verdict(score >= self.threshold, score, "" if score >= self.threshold else self.why(cached, incoming))

    async def check_many(
        self, items: Sequence[tuple[str, str, tuple[str, str] | None]], conversation: bool = False
    ) -> list[Verdict]:
        """Several candidates of one lookup: (cached, incoming, replies) each, verdicts in order."""
        return [await self.check(a, b, conversation, r) for a, b, r in items]

    def why(self, cached: str, incoming: str) -> str:
        return f"{self.name}: score below {self.threshold}"


class AcceptAll(Checker):
    name = "none"

    def scores(self, pairs, conversation: bool = False, replies=None):
        return np.ones(len(pairs), np.float32)


# -- numbers ---------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def checker_words() -> dict:
    """``data/checker_words.json``: {"numbers": {word: value}, "negations": [word]}. A word listed twice,
    in one list or in both, is a load error (a silent second meaning is how word lists go wrong)."""

    def no_duplicate_keys(items):
        seen = {}
        for k, v in items:
            if k in seen:
                raise ValueError(f"checker_words.json: {k!r} is listed twice")
            seen[k] = v
        return seen

    data = json.loads(
        (HERE / "data" / "checker_words.json").read_text(encoding="utf-8"), object_pairs_hook=no_duplicate_keys
    )
    nums = {str(k).lower(): float(v) for k, v in data["numbers"].items()}
    negs = [str(w).lower() for w in data["negations"]]
    for word in negs:
        if word in nums or negs.count(word) > 1:
            raise ValueError(f"checker_words.json: {word!r} is listed twice")
    return {"numbers": nums, "negations": frozenset(negs)}


def number_words() -> dict[str, float]:
    return checker_words()["numbers"]


_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)|([a-z]+)", re.IGNORECASE)  # digits may carry a unit: 100g


def numbers(text: str) -> frozenset[float]:
    """The numbers a question mentions: digits (1,000 and 2.5 read as numbers) and number words."""
    words = number_words()
    out = set()
    for digits, word in _NUMBER.findall(text):
        if digits:
            try:
                out.add(float(digits.replace(",", "")) if digits.count(",") else float(digits))
            except ValueError:
                continue
        elif word.lower() in words:
            out.add(words[word.lower()])
    return frozenset(out)


_WORD = re.compile(r"[a-z]+n't|[a-z]+")


def negated(text: str) -> bool:
    """Whether a text says no: a negation word or a "n't" contraction."""
    words = checker_words()["negations"]
    return any(w.endswith("n't") or w in words for w in _WORD.findall(text.lower().replace("\u2019", "'")))


def negation_conflict(a: str, b: str) -> bool:
    """Conversations: one side's earlier turns (or follow-up) say no where the other's do not ("I'm
    pregnant" / "I'm not pregnant"). The model reads negation in questions well but missed it in the
    statements of earlier turns (dev split); questions are left to the model."""
    (ca, _, la), (cb, _, lb) = a.rpartition(TURN_SEPARATOR), b.rpartition(TURN_SEPARATOR)
    return negated(la) != negated(lb) or (bool(ca) and bool(cb) and negated(ca) != negated(cb))


def numbers_conflict(a: str, b: str) -> bool:
    """Each question mentions a number the other does not (2 eggs / 3 eggs, 1990 / 2010): different
    questions. A number on one side only (a detail added, "at 2am" in a padded turn) is no conflict:
    the model reads it."""
    na, nb = numbers(a), numbers(b)
    return bool(na - nb) and bool(nb - na)


# -- antonyms -------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def antonyms() -> dict[str, frozenset[str]]:
    """``data/antonyms.json``: WordNet 3.1's direct antonyms between single words, extracted by
    ``scripts/build_antonyms.py`` (a dictionary's list, not one grown on our pairs). A word may have
    several antonyms (good / bad, good / evil); a pair listed twice or a word its own antonym is a load
    error."""
    pairs = json.loads((HERE / "data" / "antonyms.json").read_text(encoding="utf-8"))["pairs"]
    out: dict[str, set[str]] = {}
    for a, b in pairs:
        if a == b or b in out.get(a, ()):
            raise ValueError(f"antonyms.json: {a!r} / {b!r} is listed twice or pairs a word with itself")
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


_ANTONYM_WORD = re.compile(r"[a-z][a-z'-]*")
# How many other words may differ besides the antonym pair. Chosen on the dev split and the checker's
# training pairs (positives only reached by a rule at 4: "most affordable" / "least expensive", a double
# flip that keeps the meaning), one under the first value that rejected a positive.
ANTONYM_SLACK = 2


def _forms(word: str) -> set[str]:
    """The word and its stems by English inflection: plural -s/-es, comparative -er/-est (doubled
    consonant, -ier -> -y), adverb -ly ("longer" -> "long", "jointly" -> "joint")."""
    out = {word}
    if word.endswith("s") and len(word) > 3:
        out.add(word[:-1])
        if word.endswith("es") and len(word) > 4:
            out.add(word[:-2])
    for suffix in ("er", "est", "ly"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            out.add(stem)
            if stem.endswith("i"):
                out.add(stem[:-1] + "y")
            if len(stem) > 2 and stem[-1] == stem[-2]:
                out.add(stem[:-1])
            if suffix != "ly":
                out.add(stem + "e")  # later -> late
    return out


_NEGATING_PREFIXES = ("un", "in", "im", "ir", "il", "dis", "non", "non-")


def _negates(x: str, y: str) -> bool:
    """y is x with a negating prefix (install / uninstall, mute / unmute), or -less against -ful. English
    morphology rather than a list: it adds the derived pairs WordNet leaves out."""
    for s, t in ((x, y), (y, x)):
        if len(s) >= 4 and any(t == p + s for p in _NEGATING_PREFIXES):
            return True
        if s.endswith("less") and t.endswith("ful") and s[:-4] == t[:-3]:
            return True
    return False


_DIMINISHERS = frozenset(("less", "least", "not", "no", "never", "fewer"))


def converse(a: str, b: str, flip: tuple[str, str]) -> bool:
    """ "A is shorter than B" / "B is taller than A": the antonym and the participants both swapped, a
    double flip that keeps the meaning."""
    x, y = flip
    ta = [y if t == x else t for t in contrast_tokens(a)]
    ra, rb = [_role(t) for t in ta], [_role(t) for t in contrast_tokens(b)]
    ca, cb = Counter(ra), Counter(rb)
    # a filler word on one side ("ok", "hey") is allowed; the rest must be the same words reordered
    return sum((ca - cb).values()) + sum((cb - ca).values()) <= 1 and ra != rb


def antonym_conflict(a: str, b: str) -> tuple[str, str] | None:
    """A word of one text whose antonym (WordNet's, or the word with a negating prefix) is in the other,
    the two texts otherwise differing by at most ``ANTONYM_SLACK`` words: "pay more than the minimum" /
    "pay less than the minimum", "mute" / "unmute". Paraphrases that flip two words ("most affordable" /
    "least expensive") differ by more and go to the model. The prefix rule, chosen the same way, added
    23 rejections of look-alikes in dev and training pairs and no rejection of a paraphrase."""
    wa, wb = set(_ANTONYM_WORD.findall(a.lower())), set(_ANTONYM_WORD.findall(b.lower()))
    only_a, only_b = wa - wb, wb - wa
    if not only_a or not only_b or len(only_a) + len(only_b) - 2 > ANTONYM_SLACK:
        return None
    if (only_a | only_b) & _DIMINISHERS:
        return None  # "least expensive" / "cheapest": a second flip beside the antonym; the model reads it
    table = antonyms()
    forms_b = {f: w for w in only_b for f in _forms(w)}
    for x in sorted(only_a):
        for f in _forms(x):
            for y in table.get(f, ()):
                if y in forms_b:
                    return x, forms_b[y]
        for y in sorted(only_b):
            if _negates(x, y):
                return x, y
    return None


# -- contrasts --------------------------------------------------------------------------------------
# Two near-identical questions that differ in a word of grammar's closed classes ask different things:
# "cancel" / "don't cancel", "under $50" / "over $50", "within 30 days" / "after 30 days", "my account"
# / "my partner's account", "from savings to checking" / "from checking to savings". The cross-encoder
# reads these as near-paraphrases (0.97-0.995 on unseen traffic) because its training pairs never put
# them in front of it often enough; a rule over the edit between the two texts needs no such luck. The
# classes below are English grammar's (negators, prepositions and adverbs of direction, range, time and
# place, comparatives, possessive and quantifying determiners), not words collected from any pair set.

# Each group lists opposing poles ("|"): two words contrast when one group holds them on different
# poles (a word may sit in several groups). Words of one pole are synonyms here ("to" / "into", "each" /
# "every", "down" / "lower"), so swapping them is a rewording.
_CONTRAST_POLES: tuple[tuple[frozenset[str], ...], ...] = tuple(
    tuple(frozenset(pole.split()) for pole in group.split("|"))
    for group in (
        "from out off away | to into onto toward towards",
        "over above beyond higher more greater bigger larger most max maximum exceed exceeding exceeds "
        "| under below lower less fewer smaller least min minimum",
        "before until till earlier earliest prior early within | after since later latest late",
        "last previous past prior | next upcoming coming | this current",
        "first earliest beginning start | last latest final end",
        "inside in indoors inner | outside out outdoors outer",
        "front | back rear",
        "top upper | bottom lower",
        "left | right",
        "my mine | your yours | his | her hers | their theirs | our ours | its",
        "this that these those | every all each whole entire | some any several many",
    )
)


def _contrast(x: str, y: str) -> bool:
    for group in _CONTRAST_POLES:
        px = [i for i, pole in enumerate(group) if x in pole]
        py = [i for i, pole in enumerate(group) if y in pole]
        if px and py and not set(px) & set(py):
            return True
    return False


_POSSESSIVE_CONTRACTIONS = frozenset(
    "it's that's what's there's here's who's how's where's when's let's he's she's one's".split()
)
_NOT_FORMS = {"can't": "can", "cannot": "can", "won't": "will", "shan't": "shall", "cant": "can", "wont": "will"}
_CASUAL_NOT = frozenset(
    "dont doesnt didnt isnt arent wasnt werent shouldnt couldnt wouldnt hasnt havent hadnt mustnt neednt".split()
)
_CONTRAST_TOKEN = re.compile(r"[a-z0-9\u00a3$\u20ac%]+(?:['\u2019][a-z]+)?")
# The edit a contrast may sit in: at most this many changed words a side, the rest of the text equal.
# A wider edit is a rewording, which the model reads; a contrast word inside it proves nothing.
CONTRAST_MAX_EDIT = 3


def contrast_tokens(text: str) -> list[str]:
    """Lower-case words with negation made a word of its own: "don't" -> "do not", "cant" -> "can not"."""
    out: list[str] = []
    for tok in _CONTRAST_TOKEN.findall(text.lower().replace("\u2019", "'")):
        if tok.endswith(("'m", "'re")) and tok[: tok.index("'")] in _PERSON:  # "i'm" -> "i" "'m"
            out += [tok[: tok.index("'")], tok[tok.index("'") :]]
            continue
        if tok in _NOT_FORMS:
            out += [_NOT_FORMS[tok], "not"]
        elif tok.endswith("n't"):
            out += [tok[:-3], "not"]
        elif tok in _CASUAL_NOT:
            out += [tok[:-2], "not"]
        else:
            out.append(tok)
    return out


# Person, whatever the case: "I" / "me" / "my" are one participant; "Maria's" is Maria.
_PERSON = {
    **dict.fromkeys(("i", "me", "my", "mine", "myself"), "<1>"),
    **dict.fromkeys(("we", "us", "our", "ours", "ourselves"), "<1p>"),
    **dict.fromkeys(("you", "your", "yours", "yourself"), "<2>"),
    **dict.fromkeys(("he", "him", "his", "himself"), "<3m>"),
    **dict.fromkeys(("she", "her", "hers", "herself"), "<3f>"),
    **dict.fromkeys(("they", "them", "their", "theirs", "themselves"), "<3p>"),
}


# English inflection folded for the swap test: the auxiliaries' forms, a verb's or noun's -s.
_LEMMA = {
    "has": "have",
    "had": "have",
    "does": "do",
    "did": "do",
    "is": "be",
    "am": "be",
    "are": "be",
    "was": "be",
    "were": "be",
    "'m": "be",
    "'re": "be",
}


def _role(tok: str) -> str:
    if tok.endswith("'s") and tok not in _POSSESSIVE_CONTRACTIONS:
        tok = tok[:-2]
    tok = _PERSON.get(tok, tok)
    tok = _LEMMA.get(tok, tok)
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
        tok = tok[:-1]  # "calls" / "call", "cards" / "card"
    return tok


def _one_block_moved(a: list[str], b: list[str]) -> bool:
    """b is a with one contiguous run of at least ``CLAUSE`` words moved elsewhere: a clause put first or
    last ("if I'm abroad, can I use my card" / "can I use my card if I'm abroad"), which keeps the
    meaning. One word moving ("my son ... my account" / "my ... my son's account") or two participants
    trading places is not a clause moving."""
    n = len(a)
    if n > 40:
        return True  # too long to search: leave it to the model
    for i in range(n):
        for j in range(i + CLAUSE, n + 1):
            for k in range(j, n + 1):
                if a[:i] + a[j:k] + a[i:j] + a[k:] == b:
                    return True
    return False


CLAUSE = 2  # the shortest run of words that moves as a clause ("if abroad")
_CONJUNCTIONS = frozenset(("or", "and", "&", "nor", ",", "vs", "versus"))


def _conjuncts_swapped(a: list[str], b: list[str]) -> bool:
    """b is a with the two sides of an "or" / "and" exchanged ("the nile or the yangtze" / "the yangtze
    or the nile"): coordination is symmetric."""
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if not diff or len(a) != len(b):
        return False
    for i in range(max(0, diff[0] - 3), diff[0] + 1):  # the conjuncts may start with shared words ("the")
        for k in range(diff[-1] + 1, min(len(a), diff[-1] + 4) + 1):
            for m in range(i, k):
                if a[m] in _CONJUNCTIONS and b[i:k] == a[m + 1 : k] + [a[m]] + a[i:m]:
                    return True
    return False


def _possessor(tok: str) -> bool:
    return tok.endswith("'s") and tok not in _POSSESSIVE_CONTRACTIONS


def contrast_conflict(a: str, b: str) -> str:
    """Why two near-identical texts ask different things (a negation, a contrast word replaced by
    another of its class, a possessor added, an argument order swapped), or "" when the rule has no
    say. Conversations' keys are compared turn by turn by the caller."""
    import difflib

    ta, tb = contrast_tokens(a), contrast_tokens(b)
    if not ta or not tb or ta == tb:
        return ""
    negs = checker_words()["negations"]
    ops = [op for op in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes() if op[0] != "equal"]
    changed_a = sum(i2 - i1 for _, i1, i2, _, _ in ops)
    changed_b = sum(j2 - j1 for _, _, _, j1, j2 in ops)
    ra, rb = [_role(t) for t in ta], [_role(t) for t in tb]
    if Counter(ra) == Counter(rb):  # the same participants and words in another order
        if ra != rb and not _one_block_moved(ra, rb) and not _conjuncts_swapped(ra, rb):
            return "roles: the same words with the participants swapped"  # from A to B / from B to A
        return ""
    if changed_a > CONTRAST_MAX_EDIT or changed_b > CONTRAST_MAX_EDIT:
        return ""
    na = sum(t in negs for t in ta)
    nb = sum(t in negs for t in tb)
    if na % 2 != nb % 2:
        return "negation: one says no where the other does not"
    for _, i1, i2, j1, j2 in ops:
        da, db = set(ta[i1:i2]), set(tb[j1:j2])
        for x in sorted(da):
            for y in sorted(db):
                if x != y and _contrast(x, y):
                    return f"contrast: {x!r} / {y!r}"
        for t, other in [(t, tb) for t in sorted(da - db)] + [(t, ta) for t in sorted(db - da)]:
            stem = t[:-2]
            if _possessor(t) and stem not in other and stem + "s" not in other:
                return f"scope: {t!r} on one side only"  # "my balance" / "my wife's balance"
    return ""


class NumbersAgree(Checker):
    """Two questions whose numbers conflict (a year, a dose, a size, an amount) are different questions:
    a structural rule, no word list beyond the number words."""

    name = "numbers"

    def scores(self, pairs, conversation: bool = False, replies=None):
        return np.array([0.0 if numbers_conflict(a, b) else 1.0 for a, b in pairs], np.float32)

    def why(self, cached, incoming):
        return f"numbers: {sorted(numbers(cached))} vs {sorted(numbers(incoming))}"


# -- cross-encoder ---------------------------------------------------------------------------------


class CrossEncoderChecker(Checker):
    """The trained MiniLM cross-encoder (int8 ONNX) and the numbers rule; see the module docstring."""

    name = "cross_encoder"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        threshold: float = 0.5,
        num_threads: int = 1,
        numbers_rule: bool = True,
        read_replies: bool = True,
        parse_rule: bool = False,
    ):
        # One ONNX file, or several joined by "," (an ensemble: their probabilities are averaged).
        self.model_paths = [Path(x) for x in str(model_path).split(",")] if model_path else list(DEFAULT_MODELS)
        self.model_path = self.model_paths[0]
        self.parse_rule = parse_rule  # gateway/cache/parse.py: roles, modality, comparison from a parse
        self.threshold = threshold
        self.num_threads = num_threads
        self.numbers_rule = numbers_rule
        self.read_replies = read_replies  # conversations: also read the assistant turns before the follow-ups
        self._model = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._ensemble_pool: ThreadPoolExecutor | None = None

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            from gateway.cache.embedder import find_model_dir
            from gateway.cache.onnx_models import OnnxCrossEncoder

            for path in self.model_paths:
                if not path.is_file():
                    raise FileNotFoundError(
                        f"checker model {path} is missing (python scripts/train_cache_checker.py makes it)"
                    )
            self._models = [
                OnnxCrossEncoder(p, find_model_dir(), num_threads=self.num_threads) for p in self.model_paths
            ]
            self._model = self._models[0]

    async def start(self) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cache-checker")
        await asyncio.get_running_loop().run_in_executor(self._pool, self.load)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._ensemble_pool is not None:
            self._ensemble_pool.shutdown(wait=False)
            self._ensemble_pool = None

    def model_scores(self, pairs: Sequence[tuple[str, str]], conversation: bool = False, replies=None) -> np.ndarray:
        """The model alone: sigmoid of the logit, averaged over both orders. Conversations: the lowest of
        the readings: the follow-ups against each other, the earlier user turns against each other and,
        with ``replies`` (one (a, b) or None per pair), the assistant turns before the follow-ups."""
        self.load()
        if conversation and replies is not None and self.read_replies:
            s = self.model_scores(pairs, conversation)
            both = [i for i, r in enumerate(replies) if r and r[0] and r[1] and r[0] != r[1]]
            one = [i for i, r in enumerate(replies) if r and bool(r[0]) != bool(r[1])]
            if both:
                s[both] = np.minimum(s[both], self._both_orders([replies[i] for i in both]))
            s[one] = 0.0  # an answer before one follow-up and none before the other
            return s
        if not conversation:
            return self._both_orders(pairs)
        last, context = [], []
        for a, b in pairs:
            (ca, _, la), (cb, _, lb) = a.rpartition(TURN_SEPARATOR), b.rpartition(TURN_SEPARATOR)
            last.append((la, lb))
            context.append((ca, cb))
        s = self._both_orders(last)
        has = [i for i, (ca, cb) in enumerate(context) if ca and cb]
        if has:
            s[has] = np.minimum(s[has], self._both_orders([context[i] for i in has]))
        return s

    def _both_orders(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0, np.float32)
        both = list(pairs) + [(b, a) for a, b in pairs]
        if len(self._models) == 1:
            outs = [self._models[0].logits(both)]
        else:  # an ensemble: its models at once, one thread each (onnxruntime releases the GIL)
            if self._ensemble_pool is None:
                self._ensemble_pool = ThreadPoolExecutor(len(self._models), thread_name_prefix="cache-judge")
            outs = list(self._ensemble_pool.map(lambda m: m.logits(both), self._models))
        probs = np.zeros(len(both), np.float64)
        for logits in outs:
            logits = np.asarray(logits, np.float64).reshape(-1)
            probs += 1.0 / (1.0 + np.exp(-logits)) / len(self._models)
        return ((probs[: len(pairs)] + probs[len(pairs) :]) / 2).astype(np.float32)

    def scores(self, pairs, conversation: bool = False, replies=None):
        s = self.model_scores(pairs, conversation, replies)
        for i, (a, b) in enumerate(pairs):
            if self.rules_reject(a, b, conversation):
                s[i] = 0.0
        return s

    def rules_reject(self, a: str, b: str, conversation: bool) -> str:
        if not self.numbers_rule:
            return ""
        if numbers_conflict(a, b):
            return NumbersAgree().why(a, b)
        if conversation and negation_conflict(a, b):
            return "negation: one conversation says no where the other does not"
        flip = antonym_conflict(a, b)
        if flip and not converse(a, b, flip):
            return f"antonyms: {flip[0]!r} / {flip[1]!r}"
        for x, y in zip(a.split(TURN_SEPARATOR), b.split(TURN_SEPARATOR)) if conversation else [(a, b)]:
            why = contrast_conflict(x, y)
            if why and not (flip and converse(x, y, flip)):
                return why
        if self.parse_rule and not conversation:
            from gateway.cache.parse import parse_conflict

            why = parse_conflict(a, b)
            if why and not (flip and converse(a, b, flip)):
                return why
        return ""

    async def check_many(
        self, items: Sequence[tuple[str, str, tuple[str, str] | None]], conversation: bool = False
    ) -> list[Verdict]:
        """Every (cached, incoming, replies) candidate of one lookup in one batch: the rules first, then
        one pass of the model(s) over the rest (a lookup's candidates cost one call, not one each)."""
        whys = [self.rules_reject(a, b, conversation) for a, b, _ in items]
        todo = [i for i, why in enumerate(whys) if not why]
        scores: dict[int, float] = {}
        if todo:
            if self._pool is None:
                await self.start()
            loop = asyncio.get_running_loop()
            got = await loop.run_in_executor(
                self._pool, self.model_scores, [items[i][:2] for i in todo], conversation, [items[i][2] for i in todo]
            )
            scores = {i: float(x) for i, x in zip(todo, got)}
        out = []
        for i, why in enumerate(whys):
            if why:
                out.append(Verdict(False, 0.0, why))
                continue
            ok = scores[i] >= self.threshold
            out.append(Verdict(ok, scores[i], "" if ok else f"cross_encoder: {scores[i]:.3f} < {self.threshold}"))
        return out

    async def check(
        self, cached: str, incoming: str, conversation: bool = False, replies: tuple[str, str] | None = None
    ) -> Verdict:
        why = self.rules_reject(cached, incoming, conversation)
        if why:
            return Verdict(False, 0.0, why)
        if self._pool is None:
            await self.start()
        loop = asyncio.get_running_loop()
        score = float(
            (await loop.run_in_executor(self._pool, self.model_scores, [(cached, incoming)], conversation, [replies]))[
                0
            ]
        )
        ok = score >= self.threshold
        return Verdict(ok, score, "" if ok else f"cross_encoder: {score:.3f} < {self.threshold}")


def make_checker(
    name: str,
    *,
    threshold: float = 0.5,
    num_threads: int = 1,
    model_path: str | None = None,
    read_replies: bool = True,
    parse_rule: bool = False,
) -> Checker:
    if name == "cross_encoder":
        return CrossEncoderChecker(
            model_path, threshold=threshold, num_threads=num_threads, read_replies=read_replies, parse_rule=parse_rule
        )
    if name == "numbers":
        return NumbersAgree()
    if name == "none":
        return AcceptAll()
    raise ValueError(f"unknown checker {name!r} (known: {', '.join(CHECKERS)})")
