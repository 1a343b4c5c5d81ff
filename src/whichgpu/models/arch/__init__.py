"""Architecture builders: a Hugging Face ``config.json`` of one model family becomes an
:class:`~whichgpu.models.spec.ModelSpec` (shared blocks in :mod:`.build`; each builder is
registered by its ``model_type`` in :mod:`whichgpu.models.config_parse`)."""
