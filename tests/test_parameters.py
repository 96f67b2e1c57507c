"""No function in rescorer/ or moses_integration/ takes more than 8 parameters unless a record is
among them (issue 46): a long list of loose values is where a setting gets lost on its way."""

import ast

from tests.helpers import REPO

MOST = 8
# What counts as a record in an annotation: the records of settings (rescorer.records), the jobs
# built from them, and the run a training works with.
RECORD_NAMES = ("Settings", "Options", "Job", "TrainingRun")


def long_parameter_lists(source: str) -> list[str]:
    """`name (N parameters)` of each function of `source` with more than MOST parameters and no
    record among them (self and cls not counted)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        parameters = [argument for argument in arguments if argument.arg not in ("self", "cls")]
        annotations = [ast.unparse(argument.annotation) for argument in parameters if argument.annotation]
        has_record = any(name in annotation for annotation in annotations for name in RECORD_NAMES)
        if len(parameters) > MOST and not has_record:
            found.append(f"{node.name} ({len(parameters)} parameters)")
    return found


def test_no_function_takes_more_than_eight_loose_parameters():
    long_lists = [f"{path.relative_to(REPO)}: {found}"
                  for package in ("rescorer", "moses_integration") for path in sorted((REPO / package).rglob("*.py"))
                  for found in long_parameter_lists(path.read_text())]
    assert long_lists == []


def test_the_check_finds_a_long_list_and_lets_a_record_through():
    loose = "def f(a, b, c, d, e, f, g, h, i):\n    pass\n"
    with_record = "def f(a: TrainSettings, b, c, d, e, f, g, h, i):\n    pass\n"
    method = "class C:\n    def m(self, a, b, c, d, e, f, g, h):\n        pass\n"
    assert long_parameter_lists(loose) == ["f (9 parameters)"]
    assert long_parameter_lists(with_record) == [] and long_parameter_lists(method) == []
