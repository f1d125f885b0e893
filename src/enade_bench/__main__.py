"""``python -m enade_bench ARGS``: the ``enade-bench`` command, from any environment that imports the package.

An environment layered on another (a plug-in's virtual environment that reads
enade-bench's packages) has no ``enade-bench`` script of its own; this runs the same
entry point (docs/adding_an_exam.md, "An installed package").
"""

from enade_bench.cli.main import entry_point

if __name__ == "__main__":
    entry_point()
