"""An RL setting given as 0 is refused with its field named, not read as the framework's
default (--completion-tokens 0 used to plan 256-token completions silently)."""

import pytest

from whichgpu.errors import InputError
from whichgpu.estimate.rl import settings
from whichgpu.vocabulary import Task


@pytest.mark.parametrize("field", ["generations", "prompt_tokens", "completion_tokens"])
def test_zero_is_refused_with_its_field(field):
    with pytest.raises(InputError, match=field.replace("_", "-")):
        settings(Task.GRPO, **{field: 0})


def test_none_takes_the_framework_default_and_a_value_is_kept():
    default = settings(Task.GRPO)
    assert default.completion_tokens == default.framework.completion_tokens
    assert settings(Task.GRPO, completion_tokens=1).completion_tokens == 1
