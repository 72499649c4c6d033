"""The model decides, the writers print (issue 35, docs/ARCHITECTURE.md
"Layers"): below converter/out/ (base, read, analyse, model) no object
writes to standard output, checked on the built objects with `nm` as
test_layers.py checks the calls. A file there that wants to say
something is handed a FILE * (the reader's and the report's errors go to
the stderr their caller passes); the text, the JSON and the pages are
out/'s."""
from test_layers import CONVERTER_LAYERS, objects, symbols

# what writes to standard output without naming a FILE *, and that FILE *
STDOUT = {"stdout", "printf", "vprintf", "puts", "putchar"}


def printing(objs, below):
    """"file (symbols)" for each object of a directory in below that
    references STDOUT"""
    return sorted("%s (%s)" % (name, " ".join(sorted(symbols(f, False) & STDOUT)))
                  for name, f in objs.items()
                  if name.split("/")[1] in below and symbols(f, False) & STDOUT)


def test_nothing_below_the_writers_prints():
    below = CONVERTER_LAYERS[:CONVERTER_LAYERS.index("out")]
    assert below == ["base", "read", "analyse", "model"]
    assert printing(objects("converter"), below) == []


def test_a_printing_object_is_found(tmp_path):
    """the check itself, on objects whose answer is known: one of model/
    that prints through printf, and one that writes to a FILE * it is
    handed"""
    import subprocess
    objs = {}
    for name, body in [("prints", 'printf("%d\\n", x);'), ("handed", 'fprintf(f, "%d\\n", x);')]:
        src = tmp_path / (name + ".c")
        src.write_text('#include <stdio.h>\nvoid %s(FILE *f, int x) { (void)f; %s }\n'
                       % (name, body))
        obj = tmp_path / (name + ".o")
        subprocess.run(["cc", "-O2", "-c", "-o", str(obj), str(src)], check=True)
        objs["converter/model/" + name] = str(obj)
    assert printing(objs, ["model"]) == ["converter/model/prints (printf)"]
