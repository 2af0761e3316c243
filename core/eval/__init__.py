"""The evaluation: case files, scoring of outcomes against cases, the runner and its report, benchmarks."""

from core.eval.cases import Case, CaseFileError, Expectation, Section, load_cases
from core.eval.report import Bound, Report
from core.eval.runner import EvalSession, eval_session, run_evaluation
from core.eval.scoring import AskerView, CaseResult, EvidenceSummary, asker_view, score_case

__all__ = [
    "AskerView",
    "Bound",
    "Case",
    "CaseFileError",
    "CaseResult",
    "EvalSession",
    "EvidenceSummary",
    "Expectation",
    "Report",
    "Section",
    "asker_view",
    "eval_session",
    "load_cases",
    "run_evaluation",
    "score_case",
]
