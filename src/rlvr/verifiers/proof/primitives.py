"""The standard library's primitive types and operations (Coq 8.16), by kernel name.

Coq 8.16's `Print Assumptions` lists them under `Axioms:` though they are no axioms:
each is a kernel primitive with a computation rule (`Primitive int := #int63_type.`).
These, and no other constant, a proof may rest on. The list is every `Primitive`
command of the standard library's sources (PrimInt63.v, PrimFloat.v, PArray.v; Coq
8.16 has no primitive strings); a test reads them again from the installed sources.
"""

from __future__ import annotations

INT63 = "Coq.Numbers.Cyclic.Int63.PrimInt63"
FLOAT = "Coq.Floats.PrimFloat"
ARRAY = "Coq.Array.PArray"
# The arrays' library last. Only PArray.v itself (and its extraction) loads it.
LIBRARIES = (INT63, FLOAT, ARRAY)
ARRAY_MARK = "PArray"

_INT63_OPS = (
    "int lsl lsr land lor lxor asr add sub mul mulc div mod divs mods eqb ltb leb ltsb lesb addc addcarryc"
    " subc subcarryc diveucl diveucl_21 addmuldiv compare compares head0 tail0"
)
_FLOAT_OPS = (
    "float classify abs sqrt opp eqb ltb leb compare Leibniz.eqb mul add sub div of_uint63 normfr_mantissa"
    " frshiftexp ldshiftexp next_up next_down"
)
_ARRAY_OPS = "array make get default set length copy max_length"

STANDARD: tuple[str, ...] = (
    *(f"{INT63}.{op}" for op in _INT63_OPS.split()),
    *(f"{FLOAT}.{op}" for op in _FLOAT_OPS.split()),
    *(f"{ARRAY}.{op}" for op in _ARRAY_OPS.split()),
)

# The axioms the standard library's real numbers rest on (Coq 8.16): allowed only where
# the ground truth loads the reals, whose author takes them with the statement.
REALS_LIBRARIES = ("Coq.Reals.ClassicalDedekindReals", "Coq.Logic.FunctionalExtensionality")
REALS_AXIOMS: tuple[str, ...] = (
    "Coq.Reals.ClassicalDedekindReals.sig_forall_dec",
    "Coq.Reals.ClassicalDedekindReals.sig_not_dec",
    "Coq.Logic.FunctionalExtensionality.functional_extensionality_dep",
)
# Coq 8.16's standard-library modules that load the reals: theories/Reals and those
# elsewhere that require it.
_REALS_DIRECTORY = (
    "Alembert AltSeries ArithProp Binomial Cauchy_prod ClassicalConstructiveReals ClassicalDedekindReals"
    " Cos_plus Cos_rel DiscrR Exp_prop Integration MVT Machin NewtonInt PSeries_reg PartSum RIneq RList"
    " ROrderedType R_Ifp R_sqr R_sqrt Ranalysis Ranalysis1 Ranalysis2 Ranalysis3 Ranalysis4 Ranalysis5"
    " Ranalysis_reg Ratan Raxioms Rbase Rbasic_fun Rcomplete Rdefinitions Rderiv Reals Rfunctions Rgeom"
    " RiemannInt RiemannInt_SF Rlimit Rlogic Rminmax Rpow_def Rpower Rprod Rregisternames Rseries Rsigma"
    " Rsqrt_def Rtopology Rtrigo Rtrigo1 Rtrigo_alt Rtrigo_calc Rtrigo_def Rtrigo_facts Rtrigo_fun"
    " Rtrigo_reg Runcountable SeqProp SeqSeries SplitAbsolu SplitRmult Sqrt_reg"
)
REALS_MODULES = frozenset(
    _REALS_DIRECTORY.split()
    + "DecimalR HexadecimalR Qreals Fourier Fourier_util Lra Psatz Nsatz RealField Rings_R RMicromega".split()
)


def loads_reals(imports: list[str], preamble_words: set[str]) -> bool:
    """Whether the ground truth loads the reals: an import, or a word of the preamble's
    code (comments and strings out), names one of their modules."""
    return any(REALS_MODULES & set(m.split(".")) for m in imports) or bool(REALS_MODULES & preamble_words)
