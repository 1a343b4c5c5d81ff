"""The prompt and output lengths an inference estimate assumes, from what the workload says
(its prompt and output tokens, else its context, else the defaults)."""

from __future__ import annotations

from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, msg

DEFAULT_PROMPT = 512
DEFAULT_OUTPUT = 256


def inference_lengths(w: Workload) -> tuple[int, int, str]:
    """(prompt, output, why): the lengths the inference rates assume.

    ``--prompt-tokens`` wins; otherwise ``--context`` holds the prompt and the output
    (prompt = context - output, so a longer context means a longer KV cache read per token);
    otherwise 512 + 256. The output is ``--output-tokens`` or 256 (at most half a context).
    """
    if w.prompt_tokens:
        output = w.output_tokens or DEFAULT_OUTPUT
        if w.context and w.output_tokens and w.prompt_tokens + w.output_tokens > w.context:
            raise InputError(msg("lengths.over_context", "{prompt} + {output} exceed {context}",
                                 prompt=Field("prompt_tokens", f"{w.prompt_tokens:,}"),
                                 output=Field("output_tokens", f"{w.output_tokens:,}"),
                                 context=Field("context", f"{w.context:,}")))
        return w.prompt_tokens, output, "prompt and output as given"
    if w.context:
        if w.output_tokens and w.output_tokens > w.context:
            raise InputError(msg("lengths.output_over_context", "{output} exceed {context}",
                                 output=Field("output_tokens", f"{w.output_tokens:,}"),
                                 context=Field("context", f"{w.context:,}")))
        output = w.output_tokens or min(DEFAULT_OUTPUT, max(1, w.context // 2))
        prompt = max(1, w.context - output)
        return prompt, output, (f"the context of {w.context:,} tokens holds the prompt "
                                f"({prompt:,}) and the output ({output:,})")
    output = w.output_tokens or DEFAULT_OUTPUT
    return DEFAULT_PROMPT, output, "default prompt length (no --context or --prompt-tokens)"
