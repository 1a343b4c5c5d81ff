"""ExLlamaV2 in code: what its memory estimate says of its prefill (in chunks of 2,048 tokens,
``prefill_chunk_tokens`` in ``data/engines.toml``). Its traits and speed are data."""

from __future__ import annotations

from whichgpu.messages import Message, msg


def prefill_note(attention: Message) -> Message:
    """The activations term's note: the chunked prefill, then the attention it runs."""
    return msg("term.exllama.chunks", "exllamav2 prefills in chunks of 2,048 tokens; "
               "{attention}", attention=attention)
