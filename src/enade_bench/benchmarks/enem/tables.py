"""Tables of the psychometric analysis (ENEM runs): ability, fit, discrimination, attributes."""

from __future__ import annotations

import pandas as pd

from enade_bench.benchmarks.enem.analysis import RANDOM, Psychometrics, exam_of, item_key
from enade_bench.psychometrics.irt import item_information
from enade_bench.report.table import Table, fmt, fmt_interval, fmt_p


def ability_table(psy: Psychometrics) -> Table | None:
    """θ, SE, l_z, l_z*, ENEM score and accuracy per model, mean and 95 % interval over shuffles."""
    frames = []
    for exam in psy.exams:
        part = exam.summary.copy()
        part.insert(0, "exam", exam.label)
        part.insert(1, "year", exam.exam.year)
        part.insert(2, "area", exam.exam.area)
        part.insert(3, "booklet", exam.booklet)
        n_items = exam.per_shuffle.groupby("respondent")["n_items"].max()
        part["n_items"] = part["respondent"].map(n_items).to_numpy()
        frames.append(part)
    if not frames:
        return None
    data = pd.concat(frames, ignore_index=True)
    rows = []
    for _, r in data.iterrows():
        rows.append(
            {
                "exam": r["exam"],
                "respondent": r["respondent"],
                "K": int(r["n_shuffles"]),
                "items": int(r["n_items"]),
                "θ (EAP)": fmt_interval(r["theta_mean"], r["theta_low"], r["theta_high"], 2),
                "SE": fmt(r["se_mean"], 2),
                "l_z": fmt_interval(r["lz_mean"], r["lz_low"], r["lz_high"], 2),
                "l_z* (WLE)": fmt_interval(r["lz_star_mean"], r["lz_star_low"], r["lz_star_high"], 2),
                "ENEM score": fmt_interval(r["score_mean"], r["score_low"], r["score_high"], 0),
                "accuracy": fmt_interval(r["accuracy_mean"], r["accuracy_low"], r["accuracy_high"], 2),
                "I(θ)/max": fmt(r["relative_information"], 2),
            }
        )
    display = pd.DataFrame(rows).set_index(["exam", "respondent"])
    return Table(
        "psychometrics_ability",
        "Ability (θ, EAP), person fit and ENEM score per model, over option shuffles",
        data,
        display,
        None,
        "Mean [2.5%, 97.5% percentile over the K shuffles]. θ: EAP, N(0,1) prior, 121 points on "
        "[-6, 6] (mirt). l_z at the EAP θ; l_z* with a WLE θ (EAP has no correction term); "
        f"not assessable (all correct/wrong) shuffles are left out. '{RANDOM}': uniform guessing. "
        "I(θ)/max: test information at the mean θ relative to its peak (< 0.25: poorly measured).",
    )


def discrimination_table(psy: Psychometrics) -> Table | None:
    """Discrimination index per item (CSV) and its summary per exam (display)."""
    frames, rows = [], []
    for exam in psy.exams:
        di = exam.discrimination.copy()
        di.insert(0, "exam", exam.label)
        frames.append(di)
        rows.append(
            {
                "exam": exam.label,
                "items": len(di),
                "patterns": int(exam.tidy.groupby(["respondent", "shuffle"]).ngroups),
                "mean DI": fmt(di["di"].mean(), 3),
                "median DI": fmt(di["di"].median(), 3),
                "DI < 0.2": f"{int(di['poor'].sum())} ({100 * di['poor'].mean():.0f}%)",
            }
        )
    if not frames:
        return None
    return Table(
        "psychometrics_discrimination",
        "Discrimination index (upper - lower 25% by θ, model × shuffle patterns)",
        pd.concat(frames, ignore_index=True),
        pd.DataFrame(rows).set_index("exam"),
        None,
        "The CSV lists every item (p_top, p_bottom, di, poor, b). 'patterns' counts all respondent × "
        "shuffle patterns including the random baseline; DI uses the models' patterns only.",
    )


def attribute_table(psy: Psychometrics) -> Table | None:
    """χ² tests of independence between DI < 0.2 and item attributes."""
    frames = []
    for exam in psy.exams:
        part = exam.attributes.copy()
        part.insert(0, "exam", exam.label)
        frames.append(part)
    if not frames:
        return None
    data = pd.concat(frames, ignore_index=True)
    display = pd.DataFrame(
        {
            "exam": data["exam"],
            "attribute": data["attribute"].str.replace("_", " "),
            "poor with / without": data["poor_with"].astype(str) + " / " + data["poor_without"].astype(str),
            "ok with / without": data["ok_with"].astype(str) + " / " + data["ok_without"].astype(str),
            "χ²": data["chi2"].map(lambda v: fmt(v, 2)),
            "p": data["p_value"].map(fmt_p),
            "min E": data["min_expected"].map(lambda v: fmt(v, 1)),
        }
    ).set_index(["exam", "attribute"])
    return Table(
        "psychometrics_attributes",
        "Poorly discriminating items (DI < 0.2) vs. item attributes: Pearson χ² (1 df)",
        data,
        display,
        None,
        "Attributes detected from the text: image description in the stem, digits in the options, "
        "digits in the stem. The χ² approximation asks for min E ≥ 5.",
    )


def psychometric_tables(psy: Psychometrics) -> list[Table]:
    """The psychometric tables the analysis supports (empty without ENEM runs)."""
    builders = (ability_table, discrimination_table, attribute_table)
    return [t for build in builders if (t := build(psy)) is not None]


def question_details(psy: Psychometrics) -> dict[str, dict[str, str]]:
    r"""What the report's question browser shows of each ENEM question: its INEP item's 3PL
    parameters, and the item's information at each model's θ (EAP, mean over shuffles).

    .. math:: I_j(\theta) = a_j^2 \frac{(P_j - c_j)^2}{(1 - c_j)^2} \frac{1 - P_j}{P_j}

    (:func:`~enade_bench.psychometrics.irt.item_information`; Birnbaum 1968, eq. 20.4.16).
    """
    details: dict[str, dict[str, str]] = {}
    for exam in psy.exams:
        item_of = exam.linked.item_of() if exam.linked is not None else {}
        column = {item: j for j, item in enumerate(exam.items.item_ids)}
        models = exam.summary[exam.summary["respondent"] != RANDOM]
        thetas = models["theta_mean"].to_numpy(dtype=float)
        info = item_information(thetas, exam.items)  # models x items
        for entry in exam.respondents.values():
            for record in entry.result.records:
                key = item_key(record)
                item = item_of.get(key) if key is not None and exam_of(record) == exam.exam else None
                if item is None or item not in column or record.id in details:
                    continue
                j = column[item]
                at = [
                    f"{name} (θ = {theta:.2f}): {info[m, j]:.3g}"
                    for m, (name, theta) in enumerate(zip(models["respondent"], thetas, strict=True))
                ]
                details[record.id] = {
                    "INEP item (3PL)": f"{item}: a = {exam.items.a[j]:.3f}, b = {exam.items.b[j]:.3f}, "
                    f"c = {exam.items.c[j]:.3f} ({exam.label})",
                    "item information at each model's θ": "; ".join(at),
                }
    return details
