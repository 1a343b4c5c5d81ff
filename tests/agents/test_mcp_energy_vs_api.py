"""The MCP tools take issue 33's new fields (power cap, API comparison, power budget) and
their summaries say what came back (no server: the tool layer the server and /mcp share)."""

from __future__ import annotations

from whichgpu.agents.tools import TOOLS_BY_NAME, Answer, ToolName, input_schema, summary


def test_the_tool_schemas_take_the_new_fields():
    assert "power_cap" in input_schema(TOOLS_BY_NAME["speed"].model)["properties"]
    props = input_schema(TOOLS_BY_NAME["recommend"].model)["properties"]
    assert {"vs_api", "cached_tokens", "power_budget"} <= set(props)
    assert "vs_api" in input_schema(TOOLS_BY_NAME["cost"].model)["properties"]


def test_the_speed_summary_gives_joules_per_token(cli):
    data = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--json").json()
    text = summary(ToolName.SPEED, Answer(data))
    assert "J per token" in text and "kWh per 1M tokens" in text


def test_the_recommend_summary_points_at_vs_api_and_the_power_budget(cli):
    data = cli("recommend", "llama-3.1-8b", "--requests-per-s", "2", "--vs-api",
               "--power-budget", "1kW", "--top", "2", "--json").json()
    text = summary(ToolName.RECOMMEND, Answer(data))
    assert "'vs_api'" in text and "'power_budget'" in text
