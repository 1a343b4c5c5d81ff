"""The field types and help texts that both answers/requests.py and answers/other_requests.py
declare their fields with (prices, exchange rates, the price store, a card of one's own,
``--json`` ...): kept below both, so neither imports the other to read them."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from whichgpu.answers.fields import N_, Cli, Web
from whichgpu.answers.inputs.values import HostMemoryType, ParamCount

PRICES_HELP = ("Price source: a feed or source of the price store (article-000, "
               "vramfarm-2026-11, gpuhunt ...), NAME@SNAPSHOT or NAME@DATE, or an offer file. "
               "Default: the latest prices of every source in the store.")
GPU_SPEC_HELP = ("Your own card instead of a catalog id: memory=12GB (the fit), "
                 "bandwidth=360GB/s and fp16=TFLOPS dense (a speed), tdp=170W and price=329USD "
                 "(owning it); also fp8=, fp16_acc16=, interconnect=pcie4x16, "
                 "platform=cuda|rocm|metal|xpu|hpu, name=. --gpu 12GB is memory=12GB.")
CALIBRATION_HELP = ("A calibration profile from 'whichgpu bench': a JSON file, or 'default' "
                    "(on the web: 'default' is the server's profile, and no file is ever read).")
MAX_AGE_HELP = "Days after which prices are flagged as stale (30)."
RATE_HELP = "Exchange rate override, e.g. EURUSD=1.08 (repeatable)."
Params = Annotated[float | None, ParamCount, Field(description=(
    "Parameter count for a generic model, e.g. 70e9 or 70B.")), Cli(text=True),
    Web(label=N_("Parameters"), hint=N_("A generic dense model of this many parameters: 70B "
                                         "or 70e9."))]
HostMemory = Annotated[HostMemoryType | None, Field(description=(
    "System RAM type: ddr4, ddr5-6000, ddr5-4800x8 (MT/s x channels; default ddr5-5600x2).")),
    Cli(text=True), Web(label=N_("System RAM type"))]
GpuSpec = Annotated[str | None, Field(description=GPU_SPEC_HELP),
                    Cli(metavar="KEY=VALUE,..."),
                    Web(max_length=200, label=N_("Your own card"), hint=N_(
                        "memory=24GB,bandwidth=936GB/s,fp16=71,tdp=350W,price=700USD: memory "
                        "alone answers the fit."))]
Prices = Annotated[str | None, Field(description=PRICES_HELP),
                   Web(max_length=200, label=N_("Prices"), hint=N_(
                       "Which offer set prices the job (the Prices page shows each one’s "
                       "age)."))]
RateField = Annotated[list[str], Field(description=RATE_HELP),
                     Web(max_items=8, label=N_("Exchange rates"))]
MaxAge = Annotated[float | None, Field(gt=0, description=MAX_AGE_HELP),
                   Web(label=N_("Stale after (days)"), max=36_500)]
Json = Annotated[bool, Field(description="Machine-readable output."), Cli(flags=("--json",)),
               Web(skip=True)]
STORE_HELP = ("Price store file (default: $WHICHGPU_PRICE_STORE, else prices.sqlite in the "
              "whichgpu data directory).")
Store = Annotated[str | None, Field(description=STORE_HELP), Web(max_length=1000, skip=True)]
