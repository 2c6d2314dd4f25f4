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
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
}
