"""What people type, read once into the engine's typed objects.

- ``workload``: a request's model and settings -> a validated ``Workload`` (counts such as
  ``8k`` parsed here; the training framework's defaults applied by
  :func:`whichgpu.estimate.configure.configure_workload`).
- ``job``: the amount of work, deadline, budget, currency and ``--only`` -> a ``Job``.
- ``ownership``: purchase, power and run-cost inputs -> ``tco`` and ``cost``.
- ``values``: the request fields read as they validate (token counts, the amount of work,
  host RAM, request rates, latency targets, request lengths): the request holds the number
  and says back the text.
- ``serving``, ``traffic``, ``host``, ``speculative``, ``interconnect``, ``framework``: the
  readers of one kind of text each.

The engine packages (``estimate``, ``advise``, ``cost``) take what these build and never read
a request's text themselves.
"""
