"""Generated responses, each with all 25 IFEval instructions, for the differential test.

Responses are assembled from fragments that sit on the edges of each check (bullets
with and without a space, `**` runs, `<<` titles, `P.S` spellings, abbreviations for
Punkt, contractions for the Treebank tokenizer, other languages, JSON fences...). Each
instruction's kwargs are drawn near the response's own figures (its word count, its
paragraphs' first words, its ending), so every type is seen both followed and not.
No kwarg is 0: lm-eval drops falsy kwargs and draws random ones instead.
"""

from __future__ import annotations

import random
from typing import Any

SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "Dr. Smith arrived at 5 p.m. yesterday.",
    "I think, therefore I am!",
    "Is this the answer?",
    "We bought apples, pears and plums.",
    "Mr. Jones met Ms. Lee at the U.S. embassy.",
    "The value is 3.14 and e.g. not 2.71.",
    'She said "hello." Then she left.',
    "Prices rose by 5% in Jan. and fell in Feb.",
    "It works... mostly.",
    "My answer is yes.",
    "My answer is maybe.",
    "Any other questions?",
    "Is there anything else I can help with?",
    "Visit example.com or mail someone@example.org today.",
    "This is a well-known, long-term plan.",
)
UPPER = ("THIS IS VERY IMPORTANT.", "DON'T PANIC, IT'S FINE.", "NASA AND THE U.S. ARMY AGREED.", "OK")
LOWER = ("this is all lower case.", "we can't stop now, can we?", "the end is near")
FOREIGN = (
    "Le chat est sur la table et il dort tranquillement.",
    "Der Hund spielt im Garten mit dem Ball.",
    "El perro corre rápidamente por el parque cada mañana.",
    "これは日本語の文章です。今日はいい天気ですね。",
    "Сегодня очень хорошая погода, и мы идём гулять.",
    "1 2 3 4 5 !!!",
)
MARKUP = (
    "* item one",
    "- item two",
    "  * nested item",
    "** bold line",
    "*not a bullet*",
    "*highlighted part*",
    "**bold part**",
    "* *",
    "**  **",
    "Section 1",
    "SECTION 2",
    "Section3 intro",
    "<<My Title>>",
    "<< >>",
    "<<<>>>",
    "<<a title>> and <<another>>",
    "[name]",
    "[address] and [date]",
    "an open [ bracket",
    "[]",
    "P.S. see you soon",
    "P.P.S one more thing",
    "p. s. lower case",
    "PS: a note",
    '"Quoted words"',
)
JSONS = ('```json\n{"a": 1, "b": [1, 2]}\n```', '{"a": [1, 2]}', "{bad json}", '```\n["x", "y"]\n```')
SEPARATORS = (" ", " ", "\n", "\n\n", "\n\n", "\n***\n", "\n******\n", "\n\n\n")
VOCAB = (
    "fox", "dog", "answer", "apples", "smith", "embassy", "plan", "item", "section", "title", "banana",
    "the", "is", "this", "important", "panic", "chat", "hund", "quantum", "zebra", "yes", "bold",
)  # fmt: skip
PROMPTS = ("Write a short note about dogs.", "Describe the weather today.")
LANGUAGES = ("en", "fr", "de", "es", "ja", "ru")
RELATIONS = ("less than", "at least")
POSTSCRIPTS = ("P.S.", "P.P.S", "PS:")
END_PHRASES = ("Any other questions?", "Is there anything else I can help with?", "mostly.")


def _fragment(rng: random.Random) -> str:
    pool = rng.choices((SENTENCES, UPPER, LOWER, FOREIGN, MARKUP), weights=(6, 1, 1, 1, 4))[0]
    return rng.choice(pool)


def response(rng: random.Random) -> tuple[str, str]:
    """A (prompt, response) pair."""
    prompt = rng.choice(PROMPTS)
    kind = rng.random()
    if kind < 0.08:
        return prompt, rng.choice(JSONS)
    if kind < 0.14:
        text = " ".join(rng.choice(FOREIGN) for _ in range(rng.randint(1, 3)))
        return prompt, text
    parts = [_fragment(rng) for _ in range(rng.randint(1, 9))]
    text = parts[0] + "".join(rng.choice(SEPARATORS) + part for part in parts[1:])
    style = rng.random()
    if style < 0.08:
        text = text.upper()
    elif style < 0.16:
        text = text.lower()
    elif style < 0.22:
        text = f'"{text}"'
    elif style < 0.28:
        text = f"{prompt}\n{text}"
    if rng.random() < 0.1:
        text += " " + rng.choice(END_PHRASES)
    return prompt, text


def _near(rng: random.Random, value: int) -> int:
    return max(1, value + rng.randint(-2, 2))


def _paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


def kwargs_for(rng: random.Random, prompt: str, text: str) -> dict[str, dict[str, Any]]:
    """Kwargs for all 25 instructions, drawn near this response's own figures."""
    words = text.split()
    paragraphs = _paragraphs(text)
    nth = rng.randint(1, max(1, len(paragraphs)))
    first = paragraphs[nth - 1].split()[0].strip("\"'.,!?").lower() if paragraphs else ""
    return {
        "keywords:existence": {"keywords": rng.sample(VOCAB, rng.randint(1, 3))},
        "keywords:frequency": {
            "keyword": rng.choice(VOCAB),
            "frequency": rng.randint(1, 3),
            "relation": rng.choice(RELATIONS),
        },
        "keywords:forbidden_words": {"forbidden_words": rng.sample(VOCAB, rng.randint(1, 3))},
        "keywords:letter_frequency": {
            "letter": rng.choice("aeiostxzAE"),
            "let_frequency": _near(rng, text.lower().count("e")),
            "let_relation": rng.choice(RELATIONS),
        },
        "language:response_language": {"language": rng.choice(LANGUAGES)},
        "length_constraints:number_sentences": {
            "num_sentences": _near(rng, text.count(".") + text.count("?") + text.count("!")),
            "relation": rng.choice(RELATIONS),
        },
        "length_constraints:number_paragraphs": {"num_paragraphs": _near(rng, text.count("***") + 1)},
        "length_constraints:number_words": {"num_words": _near(rng, len(words)), "relation": rng.choice(RELATIONS)},
        "length_constraints:nth_paragraph_first_word": {
            "num_paragraphs": max(nth, len(paragraphs) if rng.random() < 0.7 else _near(rng, len(paragraphs))),
            "nth_paragraph": nth,
            "first_word": first if first and rng.random() < 0.7 else rng.choice(VOCAB),
        },
        "detectable_content:number_placeholders": {"num_placeholders": rng.randint(1, 3)},
        "detectable_content:postscript": {"postscript_marker": rng.choice(POSTSCRIPTS)},
        "detectable_format:number_bullet_lists": {"num_bullets": rng.randint(1, 3)},
        "detectable_format:constrained_response": {},
        "detectable_format:number_highlighted_sections": {"num_highlights": rng.randint(1, 3)},
        "detectable_format:multiple_sections": {
            "section_spliter": rng.choice(("Section", "SECTION")),
            "num_sections": rng.randint(1, 2),
        },
        "detectable_format:json_format": {},
        "detectable_format:title": {},
        "combination:two_responses": {},
        "combination:repeat_prompt": {"prompt_to_repeat": prompt if rng.random() < 0.7 else rng.choice(PROMPTS)},
        "startend:end_checker": {"end_phrase": rng.choice(END_PHRASES)},
        "startend:quotation": {},
        "change_case:capital_word_frequency": {
            "capital_frequency": _near(rng, sum(w.isupper() for w in words)),
            "capital_relation": rng.choice(RELATIONS),
        },
        "change_case:english_capital": {},
        "change_case:english_lowercase": {},
        "punctuation:no_comma": {},
    }


def cases(count: int, seed: int = 16) -> list[tuple[str, str, dict[str, Any]]]:
    """`count` (prompt, response, ground truth) triples, each with all 25 instructions."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        prompt, text = response(rng)
        kwargs = kwargs_for(rng, prompt, text)
        out.append((prompt, text, {"instruction_id_list": list(kwargs), "kwargs": list(kwargs.values())}))
    return out
