"""Speculative decoding as people type it (``mtp``, ``eagle``, ``draft:MODEL``), read once in
the answer layer (issue 35); the engine takes a Speculation (estimate/speculative.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.errors import InputError
from whichgpu.estimate.speculative import SpecMethod, Speculation, default_draft_tokens
from whichgpu.messages import Field, msg

if TYPE_CHECKING:
    from whichgpu.answers.inputs.values import Drafter
    from whichgpu.models.spec import ModelSpec

# the spellings engines use for the same drafters
_ALIASES = {"mtp": SpecMethod.MTP, "nextn": SpecMethod.MTP, "eagle": SpecMethod.EAGLE,
            "eagle3": SpecMethod.EAGLE, "eagle-3": SpecMethod.EAGLE, "draft": SpecMethod.DRAFT}


def read_drafter(text: str) -> tuple[SpecMethod, str | None]:
    """``mtp``, ``eagle`` or ``draft:MODEL``: the drafter and the model named after the colon
    (None where none is)."""
    raw = text.strip()
    name, _, rest = raw.partition(":")
    method = _ALIASES.get(name.strip().lower())
    if method is None:
        raise InputError(msg("speculative.unknown", "unknown drafter {v!r} for {field}: use "
                             "mtp, eagle or draft:MODEL", v=raw, field=Field("speculative")))
    return method, rest.strip() or None


def parse_speculative(drafter: str | Drafter | None, draft_tokens: int | None,
                      target: ModelSpec) -> Speculation | None:
    """``mtp``, ``eagle`` or ``draft:MODEL``, as text or already read (a request's
    ``speculative``), for ``target`` (None: no speculative decoding)."""
    if draft_tokens is not None and not drafter:
        raise InputError(msg("speculative.tokens_alone", "{tokens} needs {speculative} (mtp, "
                             "eagle or draft:MODEL)", tokens=Field("draft_tokens"),
                             speculative=Field("speculative")))
    if isinstance(drafter, str):
        if not drafter.strip():
            return None
        method, rest = read_drafter(drafter)
    elif drafter is None:
        return None
    else:
        method, rest = drafter.method, drafter.model
    if draft_tokens is not None and not 1 <= draft_tokens <= 16:
        raise InputError(msg("bound.draft_tokens", "{field} must be between 1 and 16, got {v}",
                             field=Field("draft_tokens"), v=draft_tokens))
    k = draft_tokens or default_draft_tokens(method)
    if target.family == "diffusion":
        raise InputError(msg("speculative.llm_only", "{field} is for LLM inference",
                             field=Field("speculative")))
    if method is SpecMethod.DRAFT:
        if not rest:
            raise InputError(msg("speculative.draft_needs_model", "name the draft model: "
                                 "{field} draft:MODEL, e.g. draft:llama-3.2-1b",
                                 field=Field("speculative")))
        from whichgpu.models import resolve_model

        draft = resolve_model(rest)
        if draft.family == "diffusion":
            raise InputError(msg("speculative.draft_llm", "the draft model {model} is not a "
                                 "language model", model=draft.name))
        if draft.params_total >= target.params_total:
            raise InputError(msg("speculative.draft_smaller", "the draft model {draft} is not "
                                 "smaller than {target}: it would slow decoding down",
                                 draft=draft.name, target=target.name))
        if target.vocab_size and draft.vocab_size and \
                abs(draft.vocab_size - target.vocab_size) > 0.01 * target.vocab_size:
            raise InputError(msg("speculative.vocab", "the draft model {draft} has a vocabulary "
                                 "of {dv:,} tokens, {target} {tv:,}: engines need the draft to "
                                 "share the target's tokenizer", draft=draft.name,
                                 dv=draft.vocab_size, target=target.name,
                                 tv=target.vocab_size))
        return Speculation(method, k, draft, draft_tokens is not None)
    if rest:
        raise InputError(msg("speculative.no_model", "{method} takes no model name; "
                             "draft:MODEL does", method=str(method)))
    if method is SpecMethod.MTP and not target.mtp_params:
        raise InputError(msg("speculative.no_mtp", "{model} has no multi-token-prediction "
                             "layers in its checkpoint; use eagle or draft:MODEL",
                             model=target.name))
    return Speculation(method, k, None, draft_tokens is not None)
