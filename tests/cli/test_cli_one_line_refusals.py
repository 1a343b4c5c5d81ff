"""Issue 36, item 7: the command line's leftovers exit 2 with one line each.

Before: ``serve --log-level bogus`` and ``model /proc/self/mem`` were internal errors (exit 1);
``1e-320`` passed as hours per month and as months ("over 9.99989e-321 months renting
costs $0.000000"); ``compare`` ignored ``nan``/``inf`` in options it does not use; ``serve
--host 999.1.1.1`` said "other machines can reach this server" and sent a DNS query.
"""

from __future__ import annotations

import socket

import pytest

MEASURED = ("compare", "--measured", "h100-sxm=12m", "a100-80gb-sxm=21m")


def _one_line(res, *words: str) -> None:
    assert res.code == 2, (res.code, res.out, res.err)
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), res.err
    assert "Traceback" not in res.err and "internal error" not in res.err
    for w in words:
        assert w in res.err, (w, res.err)


def test_an_unknown_log_level_is_bad_input(cli):
    _one_line(cli("serve", "--log-level", "bogus"), "unknown log level 'bogus'", "warning")


@pytest.mark.parametrize("host", ["999.1.1.1", "1.2.3.4.5.6", "bad_host!", "-lead.example",
                                  "a" * 300])
def test_an_address_that_is_none_is_refused_before_anything_is_looked_up(cli, monkeypatch,
                                                                          host):
    def no_dns(*args, **kwargs):
        raise AssertionError(f"a name was resolved: {args}")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    res = cli("serve", "--host", host)
    _one_line(res, "is not an address to listen on")
    assert "other machines can reach" not in res.out + res.err


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0", "::", "::1", "localhost",
                                  "gpu-advisor.internal", "10.1.2.3"])
def test_real_addresses_are_accepted(host):
    from whichgpu.web.server import host_is_valid

    assert host_is_valid(host)


@pytest.mark.parametrize("command", ["model", "memory"])
def test_a_file_that_refuses_reads_is_bad_input(cli, command):
    _one_line(cli(command, "/proc/self/mem"), "/proc/self/mem")


@pytest.mark.parametrize("hours, months", [("1e-320", "12"), ("100", "1e-320"),
                                           ("5e-324", "12")])
def test_denormal_hours_and_months_are_refused(cli, hours, months):
    res = cli("checklist", "--workload", "inference", "--model", "7B", "--budget-per-hour",
              "2USD", "--hours-per-month", hours, "--horizon-months", months)
    _one_line(res, "must be more than 0")


@pytest.mark.parametrize("option", [("--context", "nan"), ("--output-tokens", "inf"),
                                    ("--quant", "inf"), ("--prompt-tokens", "nan"),
                                    ("--batch", "4"), ("--gpu", "nan")])
def test_compare_refuses_an_option_it_does_not_use(cli, option):
    _one_line(cli(*MEASURED, *option), option[0])


def test_compare_still_answers_with_the_options_it_uses(cli):
    res = cli(*MEASURED, "--no-project", "--json")
    assert res.code == 0, res.err
    res = cli(*MEASURED, "--model", "llama-3.1-8b", "--context", "8k", "--no-project",
              "--json")
    assert res.code == 0, res.err


@pytest.mark.parametrize("option", ["--hours-per-month", "--years"])
def test_a_denormal_float_option_is_refused_everywhere(cli, option):
    """Every float option of the command line, not only the checklist's answers."""
    _one_line(cli("tco", "h100-sxm", option, "1e-320"), "too small to compute with", option)
