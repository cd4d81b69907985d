"""Tiny registry used by the hand-written scenario files (stdlib only).

Each scenario is written by hand:
  base   - the stored conversation (U:/A: lines), ending with a user turn
  rew    - the same conversation with every user turn reworded
           (assistant turns carry the same facts in other words)
  early  - substitutions that change a fact stated early (early_detail)
  late   - substitutions that change a fact in the last / second-to-last turn
  flip   - a different history (ending with an assistant turn) after which
           the *same* last question means something else (context_flip)
  intent - a look-alike last question asking for something different
           (intent_flip), used after the same or reworded history

Every scenario gets a stable id "<domain>-<n>", n = its 0-based position among
the scenarios of that domain (in file order). All pairs built from a scenario
carry this id as "scenario", so splits can keep a scenario's pairs together.
"""

SCENARIOS = []
IRRELEVANT = []


def sc(domain, base, rew, early=None, late=None, flip=None, intent=None):
    n = sum(1 for x in SCENARIOS if x["domain"] == domain)
    SCENARIOS.append(dict(domain=domain, base=base, rew=rew, early=early,
                          late=late, flip=flip, intent=intent,
                          scenario="%s-%d" % (domain, n)))


def irr(domain, text):
    IRRELEVANT.append((domain, text))
