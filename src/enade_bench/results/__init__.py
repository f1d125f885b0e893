"""Result records, atomic files, the resumable intermediate log, and run environment.

Import from the modules (:mod:`.records`, :mod:`.store`…): importing this package imports
nothing, so a command that only checks an output folder (:mod:`.writable`) or writes a CSV
(:mod:`.csv_safe`) does not import the record models (pydantic) at ``--help``.
"""
