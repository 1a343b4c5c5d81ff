"""One answer layer for the command line, the REST API and the pages.

- ``requests``: every command's question, declared once (fields, types, bounds, help, the
  CLI flag, the web's words); ``request`` and ``fields`` hold their base and metadata.
- ``estimates``, ``advice``, ``money``, ``catalog``, ``prices``, ``validation``, ``bench``:
  one function per command, from a request to a typed answer that owns its ``to_json()``.
- ``context``: how a surface reaches models, offers and calibration profiles (the command
  line's :data:`~whichgpu.answers.context.LOCAL`; the web builds its own).

The CLI (cli/) and the web (web/) only parse, call these, and render.
"""
