"""Item response theory for model runs: ability, person fit, information, calibration.

Public entry points (see docs/psychometrics.md for every formula and
reference):

* :mod:`~enade_bench.psychometrics.irt`: :class:`ItemParams`, :func:`prob`,
  :func:`item_information`, :func:`test_information`.
* :mod:`~enade_bench.psychometrics.estimation`: :func:`estimate_theta`
  (EAP, MAP, ML, WLE), presets :data:`MIRT` and :data:`INEP`.
* :mod:`~enade_bench.psychometrics.personfit`: :func:`lz`, :func:`lz_star`,
  :func:`person_fit`, :func:`bootstrap_cutoff`.
* :mod:`~enade_bench.psychometrics.information`: :func:`measurement_position`.
* :mod:`~enade_bench.benchmarks.enem.inep`: booklets, linking, ENEM scale.
* :mod:`~enade_bench.psychometrics.calibration`: :func:`calibrate` (MML-EM).
* :mod:`~enade_bench.psychometrics.cat` (with ``cat_posthoc``, ``cat_summary``):
  adaptive testing, live (:func:`~enade_bench.psychometrics.cat.run_cat`) and
  post-hoc; :mod:`~enade_bench.psychometrics.dif`: machine-human DIF
  (:func:`~enade_bench.psychometrics.dif.machine_human_dif`; the model as the unit:
  :mod:`~enade_bench.psychometrics.dif_clustered`; simulations:
  ``bench/dif_simulation.py``);
  :mod:`~enade_bench.psychometrics.theta_compare`: θ differences between models over shuffles;
  :mod:`~enade_bench.benchmarks.enem.published`: the published ENEM patterns.
  See ``docs/psychometrics_cat_dif.md``.
* :mod:`~enade_bench.psychometrics.tidy`, :mod:`~enade_bench.psychometrics.shuffles`,
  :mod:`~enade_bench.psychometrics.classical`, :mod:`~enade_bench.psychometrics.baseline`,
  :mod:`~enade_bench.psychometrics.simulation`, :mod:`~enade_bench.psychometrics.mink`:
  analyses of tidy model output (``respondent, shuffle, item_id, correct``).
"""
