"""Seeded generator of (mostly plausible, often hostile) shell command text.

Why: the project's strict command reader is compared against GNU bash's reading
(``bash_oracle``) on many random texts.  Plausible commands make sure a good share
(30-50%) of texts are plain lists of simple commands -- the texts an approval rule
could match -- while hostile perturbations probe every place where a reader could
disagree with bash: escapes, comments, control and look-alike characters, every
redirection form, reserved words, expansions, quoting mistakes, odd operators, and
very long input.

All hostile material lives here as Python data (escapes such as ``"\\u00a0"``), so the
texts never pass through a shell command line.  Only ``random.Random`` is used, so a
seed reproduces a corpus exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["generate", "plain_command", "plain_list"]

# ---------------------------------------------------------------------------
# Plausible material (plain: letters, digits, _ . / : , @ % + = - and quotes)
# ---------------------------------------------------------------------------

COMMANDS = [
    "git",
    "ls",
    "cat",
    "echo",
    "grep",
    "rm",
    "curl",
    "sh",
    "python3",
    "npm",
    "make",
    "sed",
    "find",
    "docker",
    "kubectl",
    "pytest",
    "cargo",
    "go",
    "wc",
    "head",
    "tail",
    "cp",
    "mv",
    "mkdir",
    "chmod",
    "tar",
    "ssh",
    "env",
    "sort",
    "uniq",
    "xargs",
    "true",
]
SUBCOMMANDS = {
    "git": ["status", "diff", "log", "push", "commit", "add", "checkout", "reset", "fetch"],
    "npm": ["install", "test", "run", "ci"],
    "docker": ["ps", "run", "build", "exec", "rm"],
    "kubectl": ["get", "apply", "delete", "logs"],
    "cargo": ["build", "test", "run", "fmt"],
    "go": ["build", "test", "vet", "run"],
}
ARGS = [
    "-la",
    "-rf",
    "-n",
    "--force",
    "--hard",
    "-v",
    "--",
    "-",
    "origin",
    "main",
    "HEAD",
    "a.txt",
    "./src/main.py",
    "/dev/null",
    "/etc/passwd",
    "src/",
    "build/out.o",
    "x",
    "user@host:path/file",
    "key=value",
    "50%",
    "a,b,c",
    "+x",
    "0",
    "1",
    "2",
    "10",
    "--depth=1",
    "-m",
    "fix:bug",
    "v1.2.3",
    "README.md",
    "..",
    ".",
    "a-b_c.d",
    "http://example.com/x",
    "9",
    "pkg@1.0.0",
    "-O2",
    "a:b:c",
    "/tmp/x",
    "%s",
    "=",
    "a^b",
    "x!y",
]
SQ_WORDS = ["'hello world'", "'it'\"'\"'s'", "'a|b'", "'x; y'", "'$HOME'", "'>'", "'#'", "''", "'a b'"]
DQ_WORDS = ['"some text"', '"a b"', '""', '"it\'s"', '"#"', '"x;y"', '"a|b&c"', '"<in>"', '"q"']
TARGETS = ["/dev/null", "out.txt", "err.log", "in.txt", "all.log", "'q x'", '"dq"', "f", "2", "-"]
PLAIN_REDIRS = [
    "2>&1",
    "> /dev/null",
    ">> out.txt",
    "< in.txt",
    "2> err.log",
    "&> all.log",
    ">| f",
    "2>> err.log",
    "1> out.txt",
    "0< in.txt",
    "2>&-",
    ">&2",
    "<> f",
    "3> f",
    "&>> all.log",
]
SEPARATORS = ["; ", " && ", " || ", " | ", " |& ", " & ", "\n", ";", "&&", "|", " ;\n", " &\n"]
COMMENTS = ["# comment", "# it's fine", "#!", "# a && b", '# "unbalanced', "#"]

# ---------------------------------------------------------------------------
# Hostile material
# ---------------------------------------------------------------------------

CONTROL = ["\r", "\r\n", "\x0b", "\x0c", "\x00", "\x01", "\x02", "\x1b", "\x7f", "\x08", "\x1f", "\x85"]
UNICODE = [
    "\u00a0",  # NO-BREAK SPACE
    "\u200b",  # ZERO WIDTH SPACE
    "\u2028",  # LINE SEPARATOR
    "\u2029",  # PARAGRAPH SEPARATOR
    "\u3000",  # IDEOGRAPHIC SPACE
    "\ufeff",  # BOM / ZWNBSP
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\uff47\uff49\uff54",  # fullwidth "git"
    "\uff1b",  # FULLWIDTH SEMICOLON
    "\uff06",  # FULLWIDTH AMPERSAND
    "\uff5c",  # FULLWIDTH VERTICAL LINE
    "\u037e",  # GREEK QUESTION MARK (looks like ;)
    "\u2215",  # DIVISION SLASH
    "\u2018",
    "\u2019",
    "\u201c",
    "\u201d",  # curly quotes
    "\u00e9",
    "e\u0301",  # precomposed / combining
]
CYRILLIC = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441", "x": "\u0445", "i": "\u0456", "s": "\u0455"}
REDIR_FORMS = [
    ">",
    ">>",
    ">|",
    ">!",
    "<",
    "<>",
    "&>",
    "&>>",
    ">&",
    "<&",
    "1>&2",
    "2>&1",
    "2>&-",
    ">&-",
    "<&-",
    "0<&-",
    "3<&0",
    "2>&1-",
    "1<>",
    "0<>",
    "9>",
    "10>",
    "99999999999>",
    ">&'2'",
    "<<<",
    "<<",
    "<<-",
    "{fd}>",
    "{fd}>&-",
    "1>",
    "0<",
    ">&1x",
    "<&x",
]
RESERVED = ["if", "then", "fi", "!", "{", "}", "[[", "]]", "time", "coproc", "function", "case", "esac", "for", "in", "do", "done", "while", "until", "select", "elif", "else", "time -p"]
EXPANSIONS = [
    "$HOME",
    "${x}",
    "$(id)",
    "`id`",
    "$((1+2))",
    "~",
    "~root/x",
    "*",
    "?",
    "[ab]",
    "a*b",
    "{a,b}",
    "{1..3}",
    "$'a\\tb'",
    '$"t"',
    "$1",
    "$?",
    "$$",
    "!$",
    "<(ls)",
    ">(cat)",
    "a=(1 2)",
    '"$x"',
    '"`id`"',
    "$'\\x41'",
    "$'it\\'s'",
    "$'\\u00e9'",
]
ODD_OPERATORS = [";;", ";&", ";;&", "&&&", "|||", "& &", "; ;", "((", "))", "(", ")", "|&&", ">>>", "<<<<"]


def _word(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.65:
        return rng.choice(ARGS)
    if r < 0.8:
        return rng.choice(SQ_WORDS)
    if r < 0.95:
        return rng.choice(DQ_WORDS)
    # glued quoting, e.g. gi't' or a"b"c
    return rng.choice(["gi't'", 'a"b"c', "'a'b", "\"x\"'y'", "pre''post"])


def plain_command(rng: random.Random) -> str:
    """One simple command with plain words, optional end redirections and comment."""
    name = rng.choice(COMMANDS)
    words = [name]
    if name in SUBCOMMANDS and rng.random() < 0.8:
        words.append(rng.choice(SUBCOMMANDS[name]))
    if rng.random() < 0.1:
        words.insert(0, rng.choice(["FOO=bar", "LANG=C", "X=", "A_1=x,y"]))
    words += [_word(rng) for _ in range(rng.randrange(0, 5))]
    text = " ".join(words)
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
        text += " " + rng.choice(PLAIN_REDIRS)
    return text


def plain_list(rng: random.Random) -> str:
    """A plain list: simple commands joined by ; && || | |& & and newlines."""
    n = rng.choice([1, 1, 1, 2, 2, 3, 4])
    parts = [plain_command(rng)]
    for _ in range(n - 1):
        sep = rng.choice(SEPARATORS)
        parts.append(sep)
        if "\n" not in sep and rng.random() < 0.05:
            parts.append(" # " + rng.choice(["note", "x; y"]) + "\n")  # a && # c\n b
        parts.append(plain_command(rng))
    text = "".join(parts)
    r = rng.random()
    if r < 0.08:
        text += " &"
    elif r < 0.2:
        text += " " + rng.choice(COMMENTS)
    elif r < 0.25:
        text += "\n"
    elif r < 0.28:
        text = rng.choice(COMMENTS) + "\n" + text
    return text


# ---------------------------------------------------------------------------
# Perturbations: each takes (rng, text) and returns a new text
# ---------------------------------------------------------------------------


def _pos(rng: random.Random, text: str) -> int:
    return rng.randrange(0, len(text) + 1)


def _insert(rng: random.Random, text: str, s: str) -> str:
    i = _pos(rng, text)
    return text[:i] + s + text[i:]


def _at_blank(rng: random.Random, text: str, s: str, replace: bool = False) -> str:
    """Insert s at (or instead of) a random blank, else anywhere."""
    blanks = [i for i, c in enumerate(text) if c == " "]
    if not blanks:
        return _insert(rng, text, s)
    i = rng.choice(blanks)
    return text[:i] + s + text[i + (1 if replace else 0) :]


def p_word_after_redirect(rng: random.Random, text: str) -> str:
    return text + " " + rng.choice(PLAIN_REDIRS) + " " + rng.choice(ARGS)


def p_backslash(rng: random.Random, text: str) -> str:
    s = rng.choice(["\\ ", "\\\t", "\\\n", "\\\\", "\\", "\\#", "\\'", '\\"', "\\;", "\\|", "\\&", "\\>", "\\\r\n", "\\a"])
    return _insert(rng, text, s) if rng.random() < 0.5 else _at_blank(rng, text, s, replace=rng.random() < 0.5)


def p_hash(rng: random.Random, text: str) -> str:
    s = rng.choice(["#", "a#b", ";#x", "&&#x", "|#", " #x", "\\#", "'#'", "#'", '#"'])
    return _insert(rng, text, s)


def p_control(rng: random.Random, text: str) -> str:
    s = rng.choice(CONTROL)
    if s == "\r\n" and rng.random() < 0.5:
        return text.replace("\n", "\r\n") + "\r\n"
    return _insert(rng, text, s) if rng.random() < 0.6 else _at_blank(rng, text, s, replace=True)


def p_unicode(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.3:
        return _at_blank(rng, text, rng.choice(UNICODE), replace=rng.random() < 0.7)
    if r < 0.6:
        letters = [i for i, c in enumerate(text) if c in CYRILLIC]
        if letters:
            i = rng.choice(letters)
            return text[:i] + CYRILLIC[text[i]] + text[i + 1 :]
    return _insert(rng, text, rng.choice(UNICODE))


def p_redirect(rng: random.Random, text: str) -> str:
    op = rng.choice(REDIR_FORMS)
    target = rng.choice(TARGETS + ["", "x y", "$x", "EOF"])
    blank_before = rng.choice(["", " ", " ", "\t"])
    blank_after = rng.choice(["", " "])
    s = blank_before + op + blank_after + target
    if op in ("<<", "<<-") and rng.random() < 0.7:
        s = blank_before + op + "EOF" + "\nline $x\n" + rng.choice(["EOF", "\tEOF", "EOF ", ""]) + "\n"
        return text + s
    if rng.random() < 0.2:  # digits glued to a word: a2>f
        return text + "2" + op + target
    return _at_blank(rng, text, s + " ") if rng.random() < 0.4 else text + s


def p_assignment(rng: random.Random, text: str) -> str:
    s = rng.choice(["=x", "=", "a=b", "A=", "PATH=/tmp", "x+=1", "a[0]=1", "1a=b", "a==b", "-x=1", "_=1"])
    if rng.random() < 0.5:
        return s + " " + text
    return _at_blank(rng, text, " " + s + " ")


def p_reserved(rng: random.Random, text: str) -> str:
    w = rng.choice(RESERVED)
    r = rng.random()
    if r < 0.4:
        return w + " " + text
    if r < 0.7:
        return _at_blank(rng, text, " " + w + " ")
    return text + rng.choice(["; ", " ", "\n"]) + w


def p_expansion(rng: random.Random, text: str) -> str:
    return _at_blank(rng, text, " " + rng.choice(EXPANSIONS) + " ") if rng.random() < 0.6 else _insert(rng, text, rng.choice(EXPANSIONS))


def p_unbalanced_quote(rng: random.Random, text: str) -> str:
    return _insert(rng, text, rng.choice(["'", '"', "`", "$'", "$(", "${", "\"'", "'\""]))


def p_empty_words(rng: random.Random, text: str) -> str:
    return _at_blank(rng, text, rng.choice([" '' ", ' "" ', " ''\"\" ", " '''' "]))


def p_odd_operator(rng: random.Random, text: str) -> str:
    op = rng.choice(ODD_OPERATORS + ["|", "&&", "||", ";", "&", "|&", "\n"])
    r = rng.random()
    if r < 0.3:
        return op + " " + text  # leading operator
    if r < 0.6:
        return text + " " + op  # trailing operator
    return _at_blank(rng, text, " " + op + " ")


def p_long(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.4:
        return text + " " + " ".join(rng.choice(ARGS) for _ in range(rng.randrange(300, 1200)))
    if r < 0.7:
        return text + " " + "a" * rng.randrange(2000, 9000)
    sep = rng.choice(["; ", " && ", " | ", "\n"])
    return sep.join(plain_command(rng) for _ in range(rng.randrange(100, 400)))


def p_trailing_backslash(rng: random.Random, text: str) -> str:
    return text + rng.choice(["\\", " \\", ";\\", "\\\\", " # c\\", "\\\n", "&&\\", "|\\"])


def p_early_close(rng: random.Random, text: str) -> str:
    """Texts that try to close an enclosing function/group (the oracle's threat model)."""
    return rng.choice(
        [
            text + "; }",
            text + "\n}\n{ " + plain_command(rng),
            "}; " + text,
            text + "; }; kill -9 $$; echo pwned > /tmp/pwned; __hs_g () { y",
            text + " } ",
            "x; } ; " + text + " ; { y",
            text + "\n)\n",
            text + "\nEOF\n",
        ]
    )


def p_compound(rng: random.Random, text: str) -> str:
    return rng.choice(
        [
            "( " + text + " )",
            "{ " + text + "; }",
            "if " + text + "; then x; fi",
            "! " + text,
            "time " + text,
            text + " | { cat; }",
            "f() { " + text + "; }",
            "case x in a) " + text + ";; esac",
            "(( x = 1 )) && " + text,
            "[[ -f a ]] && " + text,
            "coproc " + text,
            "while false; do " + text + "; done",
        ]
    )


def p_whitespace(rng: random.Random, text: str) -> str:
    return text.replace(" ", rng.choice(["\t", "  ", " \t ", "\t\t"]), rng.randrange(1, 4))


def p_glue(rng: random.Random, text: str) -> str:
    """Remove blanks around operators / glue quotes to words."""
    r = rng.random()
    if r < 0.5:
        for op in (" && ", " || ", " | ", " ; ", "; ", " > ", " >> ", " < ", " 2>&1"):
            text = text.replace(op, op.strip(), 1)
        return text
    return _at_blank(rng, text, rng.choice(["'", '"', "''", '"x"', "'y'"]), replace=True)


PERTURBATIONS: list[tuple[float, Callable[[random.Random, str], str]]] = [
    (1.0, p_word_after_redirect),
    (1.5, p_backslash),
    (1.0, p_hash),
    (1.5, p_control),
    (1.5, p_unicode),
    (2.0, p_redirect),
    (1.0, p_assignment),
    (1.0, p_reserved),
    (1.0, p_expansion),
    (0.8, p_unbalanced_quote),
    (0.6, p_empty_words),
    (1.0, p_odd_operator),
    (0.15, p_long),
    (0.6, p_trailing_backslash),
    (0.6, p_early_close),
    (0.8, p_compound),
    (0.6, p_whitespace),
    (0.8, p_glue),
]
_WEIGHTS = [w for w, _ in PERTURBATIONS]
_FUNCS = [f for _, f in PERTURBATIONS]


def generate(rng: random.Random, n: int) -> list[str]:
    """n texts: 10% untouched plain lists, the rest with 1-4 hostile perturbations.

    Many perturbations keep the text a plain list in bash's reading (``a#b``, ``\\ ``,
    CR or NBSP inside a word, a word after a redirection, glued operators...) -- those
    are exactly where a strict reader may disagree with bash -- so about 45-50% of
    the texts read as plain lists of simple commands.
    """
    out: list[str] = []
    for _ in range(n):
        text = plain_list(rng)
        if rng.random() >= 0.1:
            for f in rng.choices(_FUNCS, weights=_WEIGHTS, k=rng.choice([1, 2, 2, 3, 3, 4])):
                text = f(rng, text)
        out.append(text)
    return out


if __name__ == "__main__":
    import sys

    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    for t in generate(random.Random(seed), int(sys.argv[2]) if len(sys.argv) > 2 else 20):
        print(repr(t))
