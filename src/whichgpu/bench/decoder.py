"""A decoder built from a ModelSpec with random weights: same shapes, no download.

Every matmul the real model runs is here with the real sizes: q/k/v/o projections with its
query and key-value heads (GQA), the gated (SwiGLU) or plain MLP, the embedding and the LM
head (tied or not), one RMSNorm per sub-layer, rotary positions, SDPA attention and a KV cache.
What differs from the Hugging Face implementation is what costs nearly nothing: norm flavour,
biases, sliding windows (full attention is used), soft-capping. Dense decoders only: MoE and
MLA models are refused rather than measured wrongly.

This module imports PyTorch at the top; import it only after checking PyTorch is there.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from whichgpu.bench.buildable import check_buildable
from whichgpu.models.spec import ModelSpec

ROPE_THETA = 10000.0


class RMSNorm(nn.Module):
    def __init__(self, dim: int, **kw) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, **kw))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, 1e-6)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)  # keep q/k in the compute dtype (autocast)
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class Attention(nn.Module):
    def __init__(self, spec: ModelSpec, **kw) -> None:
        super().__init__()
        h, kv, d = spec.num_attention_heads, spec.num_kv_heads or spec.num_attention_heads, \
            spec.head_dim
        self.heads, self.kv_heads, self.head_dim = h, kv, d
        self.q = nn.Linear(spec.hidden_size, h * d, bias=False, **kw)
        self.k = nn.Linear(spec.hidden_size, kv * d, bias=False, **kw)
        self.v = nn.Linear(spec.hidden_size, kv * d, bias=False, **kw)
        self.o = nn.Linear(h * d, spec.hidden_size, bias=False, **kw)

    def forward(self, x, cos, sin, cache=None, pos: int = 0):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        if cache is not None:
            kc, vc = cache
            kc[:, :, pos:pos + t] = k
            vc[:, :, pos:pos + t] = v
            k, v = kc[:, :, :pos + t], vc[:, :, :pos + t]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1,
                                           enable_gqa=self.kv_heads != self.heads)
        return self.o(y.transpose(1, 2).reshape(b, t, self.heads * self.head_dim))


class MLP(nn.Module):
    def __init__(self, spec: ModelSpec, **kw) -> None:
        super().__init__()
        self.gated = spec.gated_mlp
        n, i = spec.hidden_size, spec.intermediate_size
        self.up = nn.Linear(n, i, bias=False, **kw)
        self.gate = nn.Linear(n, i, bias=False, **kw) if self.gated else None
        self.down = nn.Linear(i, n, bias=False, **kw)

    def forward(self, x):
        if self.gate is not None:
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, spec: ModelSpec, **kw) -> None:
        super().__init__()
        self.norm1 = RMSNorm(spec.hidden_size, **kw)
        self.attn = Attention(spec, **kw)
        self.norm2 = RMSNorm(spec.hidden_size, **kw)
        self.mlp = MLP(spec, **kw)

    def forward(self, x, cos, sin, cache=None, pos: int = 0):
        x = x + self.attn(self.norm1(x), cos, sin, cache, pos)
        return x + self.mlp(self.norm2(x))


class Decoder(nn.Module):
    """The stand-in model. ``forward`` returns logits (of the last position if asked)."""

    def __init__(self, spec: ModelSpec, *, device: str | torch.device = "cpu",
                 dtype: torch.dtype = torch.bfloat16) -> None:
        check_buildable(spec)
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.spec = spec
        self.embed = nn.Embedding(spec.vocab_size, spec.hidden_size, **kw)
        self.blocks = nn.ModuleList(Block(spec, **kw) for _ in range(spec.num_layers))
        self.norm = RMSNorm(spec.hidden_size, **kw)
        self.lm_head = None if spec.tie_word_embeddings else nn.Linear(
            spec.hidden_size, spec.vocab_size, bias=False, **kw)

    def rope(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.spec.head_dim
        inv = 1.0 / ROPE_THETA ** (torch.arange(0, d, 2, device=positions.device,
                                                dtype=torch.float32) / d)
        ang = positions.float()[:, None] * inv[None, :]
        dtype = self.embed.weight.dtype
        return ang.cos().to(dtype), ang.sin().to(dtype)

    def new_cache(self, batch: int, length: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        w = self.embed.weight
        kv = self.spec.num_kv_heads or self.spec.num_attention_heads
        shape = (batch, kv, length, self.spec.head_dim)
        return [(torch.empty(shape, device=w.device, dtype=w.dtype),
                 torch.empty(shape, device=w.device, dtype=w.dtype)) for _ in self.blocks]

    def forward(self, tokens: torch.Tensor, cache=None, pos: int = 0,
                last_only: bool = False) -> torch.Tensor:
        t = tokens.shape[1]
        cos, sin = self.rope(torch.arange(pos, pos + t, device=tokens.device))
        x = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin, cache[i] if cache is not None else None, pos)
        x = self.norm(x)
        if last_only:
            x = x[:, -1:]
        weight = self.embed.weight if self.lm_head is None else self.lm_head.weight
        return x @ weight.t()


def parameter_count(spec: ModelSpec) -> int:
    """Parameters of the stand-in, counted on the meta device (nothing is allocated)."""
    model = Decoder(spec, device="meta")
    return sum(p.numel() for p in model.parameters())
