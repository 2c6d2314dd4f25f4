"""Instruction ids other datasets use: those that are IFEval's own checks under another
name, and those that are not graded here, so that a row naming one is refused with
what it is rather than a bare "unknown id".

- open-instruct's IF-RLVR registry (`open_instruct/IFEvalG/instructions_registry.py`,
  the ids of `allenai/IF_multi_constraints_upto5`) keeps IFEval's 25 ids and adds 29.
  One of them, `letters:letter_counting2`, is IFEval's `LetterFrequencyChecker` with
  its kwargs; the rest are new checks.
- IFBench (`allenai/IFBench`, `ifbench/instructions_registry.py`) keeps IFEval's 25
  and adds 58 out-of-distribution constraints, none of which is an IFEval check.
"""

from __future__ import annotations

ALIASES = {"letters:letter_counting2": "keywords:letter_frequency"}

IF_RLVR_NEW = frozenset(
    """copy:repeat_phrase copy:copy new:copy_span_idx detectable_format:sentence_hyphens
    keywords:no_adjacent_consecutive detectable_format:square_brackets keywords:word_once
    keywords:word_count_different_numbers keywords:exclude_word_harder paragraphs:paragraphs
    paragraphs:paragraphs2 first_word:first_word_sent first_word:first_word_answer last_word:last_word_sent
    last_word:last_word_answer detectable_format:bigram_wrapping copy:copying_simple copy:copying_multiple
    punctuation:punctuation_dot punctuation:punctuation_exclamation count:lowercase_counting
    letters:letter_counting count:counting_composition count:count_unique count:count_increment_word
    keywords:palindrome keywords:keyword_specific_position keywords:start_end""".split()
)

IFBENCH_NEW = frozenset(
    """count:conjunctions count:keywords_multiple count:numbers count:person_names count:pronouns
    count:punctuation count:unique_word_count count:word_count_range count:words_japanese
    custom:character_reverse custom:csv_city custom:csv_quotes custom:csv_special_character
    custom:date_format_list custom:european_capitals_sort custom:mcq_count_length custom:multiples
    custom:reverse_newline custom:sentence_alphabet custom:word_reverse format:emoji format:line_indent
    format:list format:newline format:no_bullets_bullets format:no_whitespace format:options
    format:output_template format:parentheses format:quotes format:quote_unquote format:sub-bullets
    format:thesis format:title_case ratio:overlap ratio:sentence_balance ratio:sentence_type
    ratio:sentence_words ratio:stop_words repeat:repeat_change repeat:repeat_simple repeat:repeat_span
    sentence:alliteration_increment sentence:increment sentence:keyword words:alphabet words:consonants
    words:keywords_specific_position words:last_first words:no_consecutive words:odd_even_syllables
    words:palindrome words:paragraph_last_first words:prime_lengths words:repeats words:start_verb
    words:vowel words:words_position""".split()
)


def unsupported_reason(instruction_id: str) -> str:
    """Why an id that is not graded here is refused."""
    if instruction_id in IFBENCH_NEW:
        return f"{instruction_id!r} is one of IFBench's new constraints, which this verifier does not grade"
    if instruction_id in IF_RLVR_NEW:
        return f"{instruction_id!r} is one of open-instruct's IF-RLVR constraints, which this verifier does not grade"
    return f"unknown instruction id {instruction_id!r}"
