"""The names a fence's info string or a ground truth may give each language."""

ALIASES = {
    "python": "python",
    "python3": "python",
    "py": "python",
    "py3": "python",
    "ipython": "python",
    "cpp": "cpp",
    "c++": "cpp",
    "cxx": "cpp",
    "cc": "cpp",
    # The standard a C++ block is written to, as models and judges name it.
    **{f"{name}{std}": "cpp" for name in ("c++", "cpp", "gnu++") for std in ("11", "14", "17", "20", "23")},
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
}
