"""The questions asked on every surface (CLI, REST, the page, MCP) and what of each answer must
agree (tests/answers/test_answers_parity.py, tests/agents/test_mcp_server.py)."""

from __future__ import annotations

PRICES = "vramfarm-2026-11"
QUESTIONS = {
    "tokens": {"model": "llama-3.1-8b", "quant": "q4_k_m", "tokens": "10M"},
    "daily": {"model": "llama-3.1-8b", "tokens_per_day": "50M"},
    "users": {"model": "llama-3.1-8b", "users": "20", "tokens_per_s_each": "15"},
    "rate": {"model": "llama-3.1-8b", "engine": "vllm", "requests_per_s": "2",
             "prompt_tokens": "1000", "output_tokens": "200"},
    "images": {"model": "flux.1-dev", "task": "image", "quant": "fp8", "images": "1000"},
    "videos": {"model": "wan-2.2-5b", "task": "video", "videos": "10"},
    "steps": {"model": "llama-3.1-8b", "task": "lora", "steps": "2000"},
    "train_tokens": {"model": "qwen2.5-0.5b", "task": "pretrain", "train_tokens": "1B"},
    "none": {"model": "llama-3.1-8b", "task": "lora"},
}


def cli_args(q: dict[str, str]) -> list[str]:
    args = ["recommend", q["model"], "--json", "--prices", PRICES]
    for name, value in q.items():
        if name != "model":
            args += [f"--{name.replace('_', '-')}", value]
    return args


def summary(data: dict) -> dict:
    """What must agree: the ranking, each option's numbers, and the reasons (ids + text)."""
    return {
        "ranking": data["ranking"],
        "options": [(o["gpu"], o["count"], o["cost"], o.get("time_s")) for o in data["options"]],
        "explanation": [(m["id"], m["text"]) for m in data["messages"]["explanation"]],
        "excluded": [(e["gpu"], e["count"], e["kind"]) for e in data["excluded"]],
    }
