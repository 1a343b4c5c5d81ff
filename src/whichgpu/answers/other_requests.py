"""The request models of the commands other than the estimates and the recommendation:
``fits``, owning and running costs (``tco``, ``cost``), the catalog (``gpus``, ``gpu``,
``models``, ``model``), prices, validation, ``bench``, ``compare``, ``serve`` and profiles.

Declared as in answers/requests.py (its shared field types and help texts), which names them
and defines them when first named: a command line process defines only the models of its own
command (issue 27).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, field_validator

from whichgpu.answers.field_types import (
    CALIBRATION_HELP,
    GPU_SPEC_HELP,
    RATE_HELP,
    GpuSpec,
    HostMemory,
    Json,
    MaxAge,
    Params,
    Prices,
    RateField,
    Store,
)
from whichgpu.answers.fields import N_, Choice, Cli, Text, Web
from whichgpu.answers.inputs.values import OptionMoney, Utilisation
from whichgpu.answers.request import Request
from whichgpu.vocabulary import Engine, FitsSort, Task


class Fits(Request):
    """``whichgpu fits``: what runs on my card: the models that fit it, each with its best
    weight format, its longest context and its speed, ranked.

    whichgpu fits --gpu 12GB --host-ram 64GB (your card by its memory; a catalog id or
    --gpu-spec with its bandwidth gives speeds too).
    """

    COMMAND: ClassVar[str] = "fits"

    gpu: Annotated[str | None, Field(description=(
        "Your card: a catalog id (rtx-4070) or its memory such as 12GB (the fit only: add "
        "--gpu-spec bandwidth=... for speeds).")), Web(max_length=200, label=N_("GPU"))] = None
    gpu_spec: GpuSpec = None
    count: Annotated[int, Field(ge=1, le=64, description="How many of that card."),
                     Web(label=N_("How many"), max=64)] = 1
    task: Annotated[Task, Field(description=(
        "inference (every weight format that fits is tried, the best kept), or lora, qlora "
        "or full-ft (their own formats).")), Choice(Text(
            "choice.task", "unknown task {v!r}; use one of {choices}")),
        Web(label=N_("Workload"))] = Task.INFERENCE
    models: Annotated[str | None, Field(description=(
        "The models to try, comma-separated (presets, Hub ids or sizes). Default: every "
        "decoder preset ('whichgpu models').")), Cli(metavar="MODEL[,MODEL...]"),
        Web(max_length=2000, label=N_("Models"))] = None
    context: Annotated[str | None, Field(description=(
        "The context each model must hold to count as fitting (default 4k).")),
        Web(label=N_("Context per sequence"))] = None
    engine: Annotated[Engine | None, Field(description=(
        "The engine (inference): llamacpp by default (GGUF formats, offload to host RAM); "
        "vllm, sglang ... try their own formats.")), Choice(Text(
            "choice.engine", "unknown engine {v!r}; use one of {choices}")),
        Web(label=N_("Engine"))] = None
    host_ram: Annotated[str | None, Field(description=(
        "Your system RAM, e.g. 64GB: a model that does not fit the card alone is tried with "
        "llama.cpp's offload to it.")), Web(label=N_("System RAM"))] = None
    host_memory: HostMemory = None
    sort: Annotated[FitsSort, Field(description=(
        "size (the largest model first), speed (the fastest first) or context (the longest "
        "first).")), Choice(Text("choice.fits_sort", "{field} must be size, speed or context, "
                                 "got {v!r}")), Web(label=N_("Sort by"))] = FitsSort.SIZE
    top: Annotated[int, Field(ge=0, description="Models to show (0: all)."),
                   Web(label=N_("Models shown"), max=500)] = 20
    as_json: Json = False


def _watts(value: Any) -> Any:
    """A power as people type it (``170W``, ``0.35kW``, ``350``) in watts; numbers pass."""
    if isinstance(value, str):
        from whichgpu.units import parse_power

        return parse_power(value, what="tdp", positive=False)
    return value


class Tco(Request):
    """``whichgpu tco``: what owning a GPU costs, when it breaks even against renting, and
    whether to rent or buy.

    The article's H100 case (S11): whichgpu tco h100 --purchase-price 25000USD
    --rent-price 3.15USD --utilization 1 --cooling-per-hour 0.02USD (or --prices article-000
    for the article's rent).
    """

    COMMAND: ClassVar[str] = "tco"

    gpu: Annotated[str | None, Field(description=(
        "A catalog id, e.g. h100 or rtx-4090, or your card's memory such as 24GB (then give "
        "the purchase price and the TDP, or a GPU spec).")),
        Cli(positional=True, flags=("--gpu",), metavar="[GPU]"),
        Web(max_length=200, label=N_("GPU"))] = None
    gpu_spec: Annotated[str | None, Field(description=(
        "Your own card: memory=24GB,tdp=350W,price=700USD (see 'whichgpu memory --help').")),
        Cli(metavar="KEY=VALUE,..."), Web(max_length=200, label=N_("Your own card"))] = None
    purchase_price: Annotated[OptionMoney | None, Field(description=(
        "Price paid per GPU, e.g. 25000USD. Default: the midpoint of the catalog's purchase "
        "range.")), Cli(text=True),
        Web(label=N_("Purchase price"))] = None
    resale_value: Annotated[OptionMoney | None, Field(description=(
        "What the GPU sells for at the end, e.g. 5000USD. Default: nothing.")),
        Cli(text=True),
        Web(label=N_("Resale value at the end"))] = None
    years: Annotated[float | None, Field(gt=0, le=30, description=(
        "How long you own it; also the horizon of the advice. Default 3 (S9/S11).")),
        Web(label=N_("Years"))] = None
    host_share: Annotated[OptionMoney | None, Field(description=(
        "Share of the host/server per GPU, e.g. 2000USD. Default: nothing.")),
        Cli(text=True),
        Web(label=N_("Host share per GPU"))] = None
    tdp: Annotated[float | None, Field(gt=0, le=5000, description=(
        "Board power, e.g. 350W or 0.35kW (a bare number is watts). Default: the catalog's "
        "TDP.")), Cli(text=True), Web(label=N_("TDP (W)"))] = None
    load_factor: Annotated[float | None, Field(gt=0, le=1, description=(
        "Share of TDP drawn while busy (0-1). Default 1 (S9).")),
        Web(label=N_("Load factor"))] = None
    utilization: Annotated[float | None, Utilisation, Field(description=(
        "Share of the time it works: 0.6 or 60%. Default 0.6 (S9).")),
        Cli(flags=("--utilization", "--utilisation"), text=True),
        Web(label=N_("Utilisation"))] = None
    hours_per_month: Annotated[float | None, Field(gt=0, le=730, description=(
        "Hours of use per month (instead of the utilisation; 730 = 24/7).")),
        Web(label=N_("Hours of use per month"))] = None
    kwh_price: Annotated[OptionMoney | None, Field(description=(
        "Electricity per kWh, e.g. 0.10USD or 0.25EUR. Default 0.10USD (S9).")),
        Cli(text=True),
        Web(label=N_("Electricity per kWh"))] = None
    pue: Annotated[float | None, Field(ge=1, le=3, description=(
        "Facility power overhead (cooling as a factor on power, 1-3). Default 1.")),
        Web(label=N_("PUE"))] = None
    cooling_per_hour: Annotated[OptionMoney | None, Field(description=(
        "Cooling per hour of use, e.g. 0.02USD (S11). Default: nothing.")),
        Cli(text=True),
        Web(label=N_("Cooling per hour of use"))] = None
    maintenance_per_year: Annotated[OptionMoney | None, Field(description=(
        "e.g. 250USD. Default: nothing.")), Cli(text=True),
        Web(label=N_("Maintenance per year"))] = None
    rent_price: Annotated[OptionMoney | None, Field(description=(
        "Rental price per GPU-hour to compare with, e.g. 3.15USD. Default: the cheapest "
        "on-demand offer in the prices.")), Cli(text=True),
        Web(label=N_("Rental price per GPU-hour"))] = None
    vs: Annotated[str | None, Field(description=(
        "Own this GPU or rent that one: the rent is the cheapest on-demand offer of this "
        "catalog GPU (e.g. h100), counted for the same hours of use.")),
        Cli(metavar="GPU"), Web(max_length=200, label=N_("Rent instead"))] = None
    prices: Prices = None
    max_age: MaxAge = None
    currency: Annotated[str | None, Field(description=(
        "Show amounts in this currency (default: the purchase price's).")),
        Web(label=N_("Currency"))] = None
    rate: RateField = []
    curve: Annotated[bool, Field(description=(
        "Also print the month-by-month cumulative cost of renting vs owning.")),
        Web(skip=True)] = False
    as_json: Json = False

    BOUND_TEXT: ClassVar[dict[str, tuple[Text | None, Text | None]]] = {
        "hours_per_month": (Text("bound.tco.hours", "{field} must be more than 0 and at most "
                                 "730 (24/7), got {v}"),) * 2}

    _tdp_in_watts = field_validator("tdp", mode="before")(_watts)


class Cost(Request):
    """``whichgpu cost``: what a run costs on the cheapest offer for a GPU, under the offer's
    billing rule.

    S25: whichgpu cost --gpu rtx-4090 --work 1000 --unit image --rate-of-work 4..6/min
    --prices vramfarm-2026-11
    """

    COMMAND: ClassVar[str] = "cost"

    gpu: Annotated[str, Field(description=(
        "A catalog id, e.g. rtx-4090 or h100.")), Web(max_length=200, label=N_("GPU"))]
    duration: Annotated[str | None, Field(description=(
        "How long the run lasts: 3h20m, or a range 2h..4h (low..high) or 2h..3h..4h "
        "(low..typical..high). Or give the work and its rate.")),
        Web(label=N_("Duration"))] = None
    count: Annotated[int, Field(description=(
        "How many GPUs the job needs.")), Web(label=N_("GPUs"))] = 1
    prices: Prices = None
    max_age: MaxAge = None
    spot: Annotated[bool, Field(description="Use spot offers (on-demand by default)."),
                    Web(label=N_("Spot offers"))] = False
    work: Annotated[str | None, Field(description=(
        "How much the run produces (1000, 1M), for a cost per unit.")),
        Web(label=N_("Work"))] = None
    rate_of_work: Annotated[str | None, Field(description=(
        "How fast the work goes, instead of the duration: 4/min, 4..6/min (S25: images a "
        "minute) or 300..700/s (tokens a second).")), Web(label=N_("Rate of work"))] = None
    unit: Annotated[str, Field(description=(
        "What one unit of work is: image, token, run ...")), Web(label=N_("Unit"))] = "task"
    per: Annotated[str | None, Field(description=(
        "Cost per this many units of work (1M: per million). Default 1.")),
        Web(label=N_("Per"))] = None
    currency: Annotated[str | None, Field(description=(
        "Show amounts in this currency (default: the GPU's offers' currency).")),
        Web(label=N_("Currency"))] = None
    rate: RateField = []
    vs_api: Annotated[str | None, Field(description=(
        "A model (preset id, e.g. llama-3.3-70b): the run's cost per million tokens (with "
        "--work N --unit token and a duration or rate of work) against providers' per-token "
        "output prices for it, and the utilisation at which the run breaks even.")),
        Cli(metavar="MODEL"), Web(max_length=200, label=N_("Compare with per-token APIs for"))
    ] = None
    as_json: Json = False


# ------------------------------------------------------------------ catalog and models

class Gpus(Request):
    """``whichgpu gpus``: the GPU catalog with throughput, and cost per TFLOP-hour."""

    COMMAND: ClassVar[str] = "gpus"

    precision: Annotated[str, Field(description=(
        "Throughput figure for cost per TFLOP: bf16, fp16, fp16_acc16, fp8, fp4, tf32, fp32, "
        "int8 ... (dense), or an article's quoted set such as article-000:fp16.")),
        Cli(flags=("--precision", "-p")), Web(label=N_("Throughput figure"))] = "bf16"
    prices: Prices = None
    currency: Annotated[str | None, Field(description=(
        "Prices in this currency (converted where rates exist, else only offers quoted in "
        "it). Default: the currency most offers use.")), Web(label=N_("Currency"))] = None
    max_age: MaxAge = None
    vendor: Annotated[str | None, Field(description="nvidia or amd."),
                      Web(label=N_("Vendor"))] = None
    min_memory: Annotated[str | None, Field(description=(
        "e.g. 48GB or 80GiB.")), Web(label=N_("At least this much memory"))] = None
    form_factor: Annotated[str | None, Field(description=(
        "sxm, pcie, nvl, oam, superchip or consumer.")), Web(label=N_("Form factor"))] = None
    sort: Annotated[str, Field(description=(
        "cost-per-tflop, tflops, memory, bandwidth, price or id.")),
        Web(label=N_("Sort by"))] = "cost-per-tflop"
    priced_only: Annotated[bool, Field(description="Only GPUs with an offer in the prices."),
                           Web(label=N_("Only GPUs with a price"))] = False
    only: Annotated[str | None, Field(description=(
        "List only these GPUs (comma-separated catalog ids or names, e.g. "
        "rtx-4090,a100,h100). Default: the whole catalog.")), Cli(metavar="GPU[,GPU...]"),
        Web(max_length=400, label=N_("Compare"))] = None
    rate: RateField = []
    as_json: Json = False


class Gpu(Request):
    """``whichgpu gpu``: one GPU, every spec with its source, its offers, and what the
    articles say it is for."""

    COMMAND: ClassVar[str] = "gpu"

    gpu: Annotated[str, Field(description=(
        "A catalog id, e.g. h100 or rtx-4090.")),
        Cli(positional=True, flags=("--gpu",), metavar="GPU"),
        Web(max_length=200, label=N_("GPU"))]
    lang: Annotated[str, Field(description=(
        "en or fr, for the article statements (fr-FR and any fr-* mean fr).")),
        Web(max_length=10, label=N_("Language"))] = "en"
    as_json: Json = False


class Models(Request):
    """``whichgpu models``: the model presets shipped with whichgpu (they resolve offline)."""

    COMMAND: ClassVar[str] = "models"

    family: Annotated[str | None, Field(description="decoder or diffusion."),
                      Web(max_length=20, label=N_("Family"))] = None
    as_json: Json = False


class Model(Request):
    """``whichgpu model``: a model's architecture and parameter breakdown."""

    COMMAND: ClassVar[str] = "model"

    model: Annotated[str | None, Field(description=(
        "Preset alias, Hub id, config.json or folder path, .gguf file, or a size like 70B.")),
        Cli(positional=True, metavar="MODEL"), Web(max_length=200, label=N_("Model"))] = None
    params: Params = None
    offline: Annotated[bool, Field(description="Never contact the Hugging Face Hub."),
                       Web(skip=True)] = False
    as_json: Json = False


# ------------------------------------------------------------------ prices


class PricesList(Request):
    """``whichgpu prices list``: offers, cheapest per GPU-hour first, with each price's age
    and source."""

    COMMAND: ClassVar[str] = "prices list"

    gpu: Annotated[str | None, Field(description=(
        "A GPU or family (h100 covers SXM, PCIe and NVL).")),
        Cli(positional=True, flags=("--gpu",), metavar="[GPU]"),
        Web(max_length=200, label=N_("GPU"))] = None
    spot: Annotated[bool, Field(description="Only spot (interruptible) offers."),
                    Web(label=N_("Spot only"))] = False
    on_demand: Annotated[bool, Field(description="Only on-demand offers."),
                         Web(label=N_("On-demand only"))] = False
    currency: Annotated[str | None, Field(description=(
        "Show prices in this currency: converted where exchange rates are available, "
        "otherwise only the offers quoted in it (never mixed).")),
        Web(label=N_("Currency"))] = None
    prices: Prices = None
    provider: Annotated[str | None, Field(description="Only this provider."),
                        Web(max_length=200, label=N_("Provider"))] = None
    limit: Annotated[int | None, Field(ge=0, description=(
        "Rows to show (0: all). Default: 25 in the table, every offer with --json.")),
        Web(label=N_("Rows"), max=1000)] = None
    max_age: MaxAge = None
    store: Store = None
    as_json: Json = False


class PricesHistory(Request):
    """``whichgpu prices history``: how a GPU's cheapest price moved, snapshot by snapshot,
    per feed."""

    COMMAND: ClassVar[str] = "prices history"

    gpu: Annotated[str, Field(description="A GPU or family."),
                   Cli(positional=True, flags=("--gpu",), metavar="GPU"),
                   Web(max_length=200, label=N_("GPU"))]
    feed: Annotated[str | None, Field(description="Only this feed."),
                    Web(max_length=200, label=N_("Feed"))] = None
    store: Store = None
    as_json: Json = False


class PricesRefresh(Request):
    """``whichgpu prices refresh``: fetch prices from every source into the store; failures
    keep the previous data."""

    COMMAND: ClassVar[str] = "prices refresh"

    source: Annotated[list[str], Field(description=(
        "Source to refresh (repeatable): shipped, skypilot (every cloud but GCP), "
        "skypilot/CLOUD (skypilot/gcp included), gpuhunt, gpuhunt/PROVIDER, a URL source's "
        "name or an https URL. Default: every source.")), Cli(flags=("--source", "-s")),
        Web(skip=True)] = []
    force: Annotated[bool, Field(description=(
        "Accept a snapshot the sanity guards reject (not an empty one).")),
        Web(skip=True)] = False
    store: Store = None
    wait: Annotated[str, Field(description=(
        "If another refresh of the store is running (any process or machine), wait up to "
        "this long (10m); by default this one is skipped, saying so.")),
        Cli(metavar="DURATION"), Web(skip=True)] = "0s"
    as_json: Json = False


class PricesImport(Request):
    """``whichgpu prices import``: store your own offers (private quotes, on-premise prices)
    as a dated snapshot."""

    COMMAND: ClassVar[str] = "prices import"

    file: Annotated[str, Field(description="A CSV or JSON offer file."),
                    Cli(positional=True, metavar="FILE"), Web(skip=True)]
    name: Annotated[str | None, Field(description=(
        "Feed name (default: the file's name without extension).")), Web(skip=True)] = None
    observed_at: Annotated[str | None, Field(description=(
        "Date for rows without observed_at (default: now).")), Web(skip=True)] = None
    force: Annotated[bool, Field(description="Accept prices the guards reject."),
                     Web(skip=True)] = False
    store: Store = None
    as_json: Json = False


class PricesSources(Request):
    """``whichgpu prices sources``: every price source, its feeds, their age and the last
    problem."""

    COMMAND: ClassVar[str] = "prices sources"

    unmapped: Annotated[bool, Field(description=(
        "List the GPU names each feed could not map.")), Web(skip=True)] = False
    store: Store = None
    as_json: Json = False


class SourcesAdd(Request):
    """``whichgpu prices sources add``: register a URL price source; 'whichgpu prices
    refresh' then fetches it."""

    COMMAND: ClassVar[str] = "prices sources add"

    name: Annotated[str, Field(description="A short name for the source."),
                    Cli(positional=True, metavar="NAME"), Web(skip=True)]
    url: Annotated[str, Field(description=(
        "An https URL serving whichgpu's JSON offer schema.")),
        Cli(positional=True, metavar="URL"), Web(skip=True)]
    allow_http: Annotated[bool, Field(description=(
        "Allow plain http (a server on your own network).")), Web(skip=True)] = False
    store: Store = None


class SourcesRemove(Request):
    """``whichgpu prices sources remove``: forget a URL source (its stored snapshots stay, as
    history)."""

    COMMAND: ClassVar[str] = "prices sources remove"

    name: Annotated[str, Field(description="A URL source's name."),
                    Cli(positional=True, metavar="NAME"), Web(skip=True)]
    store: Store = None


class PricesPrune(Request):
    """``whichgpu prices prune``: delete old snapshots, keeping the newest per feed (and
    every current one)."""

    COMMAND: ClassVar[str] = "prices prune"

    keep: Annotated[int, Field(ge=1, description="Snapshots to keep per feed."),
                    Web(skip=True)] = 30
    store: Store = None


class PricesRemove(Request):
    """``whichgpu prices remove``: undo 'prices import': delete an imported feed and its
    snapshots (its history too)."""

    COMMAND: ClassVar[str] = "prices remove"

    feed: Annotated[str, Field(description="An imported feed's name."),
                    Cli(positional=True, metavar="FEED"), Web(skip=True)]
    store: Store = None
    as_json: Json = False


class PricesApi(Request):
    """``whichgpu prices api``: the per-token API prices of open-weight models that --vs-api
    compares with, their date and source; with --refresh, fetched first from genai-prices'
    data file into the price store (a failure keeps the stored prices)."""

    COMMAND: ClassVar[str] = "prices api"

    model: Annotated[str | None, Field(max_length=200, description=(
        "Only this model (a preset id, e.g. llama-3.3-70b).")),
        Cli(positional=True, flags=("--model",), metavar="[MODEL]"),
        Web(max_length=200, label=N_("Model"))] = None
    refresh: Annotated[bool, Field(description=(
        "Fetch the prices first (default source: pydantic/genai-prices' data file, the one "
        "its own updater fetches) and store them as a dated snapshot.")), Web(skip=True)] = False
    source: Annotated[str | None, Field(max_length=1000, description=(
        "With --refresh: an https URL or a local copy of genai-prices' data.json instead of "
        "the default URL.")), Cli(metavar="URL|FILE"), Web(skip=True)] = None
    store: Store = None
    as_json: Json = False


# ------------------------------------------------------------------ validation

ValidationFile = Annotated[str | None, Field(description=(
    "A CSV in the shipped validation file's schema (default: the shipped set).")),
    Web(skip=True)]
Split = Annotated[str, Field(description="calibration, holdout or all."), Web(skip=True)]


class ValidateMemory(Request):
    """``whichgpu validate memory``: each memory measurement against the estimate, the error
    by category and engine, and the fit verdict on each measured card."""

    COMMAND: ClassVar[str] = "validate memory"

    file: ValidationFile = None
    split: Split = "all"
    as_json: Json = False


class ValidateSpeed(Request):
    """``whichgpu validate speed``: each speed measurement against the estimate, the error by
    category, by engine and architecture, and leaving each GPU and each source out."""

    COMMAND: ClassVar[str] = "validate speed"

    file: ValidationFile = None
    split: Split = "all"
    cross_validation: Annotated[bool, Field(description=(
        "Also refit without each GPU and each source and predict their rows (needs "
        "scripts/calibrate.py from the source checkout; a few seconds).")),
        Cli(negatable=True), Web(skip=True)] = True
    as_json: Json = False


class ValidateFits(Request):
    """``whichgpu validate fits``: set-ups people run, the memory model's verdict on each
    (never 'does not fit')."""

    COMMAND: ClassVar[str] = "validate fits"

    file: ValidationFile = None
    as_json: Json = False


class ValidateQuestions(Request):
    """``whichgpu validate questions``: whole questions people asked (fits, cards needed,
    speed), each against the outcome its source published, judged right, roughly, wrong or
    cannot answer."""

    COMMAND: ClassVar[str] = "validate questions"

    file: ValidationFile = None
    as_json: Json = False


class ValidateServing(Request):
    """``whichgpu validate serving``: each serving measurement against the model, by engine
    and GPU, holdout apart."""

    COMMAND: ClassVar[str] = "validate serving"

    file: ValidationFile = None
    split: Split = "all"
    loso: Annotated[bool, Field(description=(
        "Leave one calibration source out: refit without it and report its error (about "
        "20 s).")), Cli(negatable=True), Web(skip=True)] = True
    as_json: Json = False


# ------------------------------------------------------------------ a local GPU

Device = Annotated[str, Field(description=(
    "cuda, or cpu to check the harness on the CPU (CPU numbers calibrate nothing).")),
    Web(skip=True)]


class Bench(Request):
    """``whichgpu bench``: measure each GPU (matmul per precision, memory, host and peer
    bandwidth), print it beside the datasheet, and save a calibration profile for 'speed
    --calibration'."""

    COMMAND: ClassVar[str] = "bench"

    output: Annotated[str | None, Field(description=(
        "Save the profile here (default: the data directory, which --calibration default "
        "reads).")), Cli(flags=("--output", "-o")), Web(skip=True)] = None
    no_save: Annotated[bool, Field(description="Measure and print only."),
                       Web(skip=True)] = False
    quick: Annotated[bool, Field(description="Smaller sizes, fewer repetitions."),
                     Web(skip=True)] = False
    gpu_index: Annotated[str | None, Field(description=(
        "GPU indices to measure, e.g. 0,1 (default: all).")), Cli(metavar="I[,I...]"),
        Web(skip=True)] = None
    as_id: Annotated[str | None, Field(description=(
        "The catalog id of the card, when its name does not map to one.")),
        Cli(flags=("--as",)), Web(skip=True)] = None
    precision: Annotated[str | None, Field(description=(
        "Only these matmul precisions: bf16,fp8 ...")), Web(skip=True)] = None
    no_p2p: Annotated[bool, Field(description="Skip peer-to-peer copies."),
                      Web(skip=True)] = False
    device: Device = "cuda"
    as_json: Json = False


class BenchModel(Request):
    """``whichgpu bench model``: build MODEL from its config with random weights (no
    download), time prefill, decode and optionally a training step, and set the numbers beside
    whichgpu's estimates."""

    COMMAND: ClassVar[str] = "bench model"

    model: Annotated[str, Field(description=(
        "Preset alias, Hub id, config.json or folder, .gguf file, or a bare size such as "
        "70B.")), Cli(positional=True, metavar="MODEL"), Web(skip=True)]
    batch: Annotated[int, Field(description=(
        "Concurrent sequences (inference), micro-batch (training), images.")),
        Web(skip=True)] = 1
    prompt_tokens: Annotated[str, Field(description="Input length."), Web(skip=True)] = "512"
    output_tokens: Annotated[str, Field(description="Output length."), Web(skip=True)] = "128"
    train: Annotated[bool, Field(description=(
        "Also time one training step (AdamW, bf16 autocast).")), Web(skip=True)] = False
    context: Annotated[str, Field(description="Sequence length of the training step."),
                       Web(skip=True)] = "1024"
    dtype: Annotated[str, Field(description=(
        "Weights for prefill/decode: bf16, fp16 or fp32.")), Web(skip=True)] = "bf16"
    repeat: Annotated[int, Field(description="Timed repetitions (the median counts)."),
                      Web(skip=True)] = 3
    gpu: Annotated[str | None, Field(description=(
        "Catalog id to estimate for (default: the card detected).")), Web(skip=True)] = None
    calibration: Annotated[str | None, Field(description=CALIBRATION_HELP),
                           Web(skip=True)] = None
    append: Annotated[str | None, Field(description=(
        "Append the results to this folder's speed.csv and memory.csv (e.g. validation), with "
        "their conditions.")), Web(skip=True)] = None
    device: Device = "cuda"
    as_json: Json = False


class Compare(Request):
    """``whichgpu compare``: S30, the same short job on cards by its minutes and cost per run
    (billing rules included), the other cards projected from the measured one."""

    COMMAND: ClassVar[str] = "compare"

    args: Annotated[list[str], Field(description=(
        "More CARD=DURATION pairs after --measured, or the command to time after --.")),
        Cli(positional=True, metavar="[CARD=DURATION ...] | -- COMMAND"),
        Web(skip=True)] = []
    measured: Annotated[list[str], Field(description=(
        "Minutes you saw on a card: h100=12m a100=21m (durations like 12m, 1h5m, 90s).")),
        Web(skip=True)] = []
    prices: Annotated[str | None, Field(description=(
        "Offer set or offer file (default: the market prices, as every command).")),
        Web(skip=True)] = None
    currency: Annotated[str | None, Field(description="Show costs in this currency."),
                        Web(skip=True)] = None
    rate: Annotated[list[str], Field(description=RATE_HELP), Web(skip=True)] = []
    spot: Annotated[bool, Field(description="Spot offers (on-demand by default)."),
                    Web(skip=True)] = False
    count: Annotated[int, Field(description="GPUs the job uses on each card."),
                     Web(skip=True)] = 1
    model: Annotated[str | None, Field(description=(
        "The job's model: project the other cards with the speed model.")),
        Cli(flags=("--model",)), Web(skip=True)] = None
    task: Annotated[Task, Field(description=(
        "inference, lora, qlora, full-ft, pretrain, image, video or image-lora.")),
        Choice(Text("choice.task",
                "unknown task {v!r}; use one of {choices}")), Web(skip=True)] = Task.INFERENCE
    quant: Annotated[str | None, Field(description=(
        "Weight format: bf16, fp8, awq, gptq, nf4, q4_k_m, exl2-4.0 ...")),
        Web(skip=True)] = None
    batch: Annotated[int, Field(description=(
        "Concurrent sequences (inference), micro-batch (training), images.")),
        Web(skip=True)] = 1
    context: Annotated[str | None, Field(description=(
        "Tokens per sequence (8k = 8,192); the training sequence length.")),
        Web(skip=True)] = None
    prompt_tokens: Annotated[str | None, Field(description="Input length."),
                             Web(skip=True)] = None
    output_tokens: Annotated[str | None, Field(description="Output length."),
                             Web(skip=True)] = None
    engine: Annotated[Engine | None, Field(description=(
        "llamacpp, vllm, sglang, trtllm, transformers, exllamav2 or mlc; diffusers or comfyui "
        "for diffusion.")), Choice(Text("choice.engine",
                "unknown engine {v!r}; use one of {choices}")),
        Web(skip=True)] = None
    bound: Annotated[str, Field(description=(
        "Without --model: compute (dense BF16 peak), memory (bandwidth) or auto (fit both on "
        "two measured cards).")), Web(skip=True)] = "auto"
    gpu: Annotated[str | None, Field(description=(
        "With -- COMMAND: the catalog id of this machine's card, if not detected.")),
        Web(skip=True)] = None
    no_project: Annotated[bool, Field(description="Only the measured cards."),
                          Web(skip=True)] = False
    priced_only: Annotated[bool, Field(description="Only cards with an offer in --prices."),
                           Web(skip=True)] = False
    calibration: Annotated[str | None, Field(description=CALIBRATION_HELP),
                           Web(skip=True)] = None
    as_json: Json = False


class Serve(Request):
    """``whichgpu serve``: the web pages (advisor, VRAM selector, catalog, cost, rent vs buy,
    prices) and the REST API (/api/v1, OpenAPI at /docs), with the shipped catalog and the
    local prices."""

    COMMAND: ClassVar[str] = "serve"

    host: Annotated[str, Field(description=(
        "Address to listen on. The default serves this machine only.")),
        Web(skip=True)] = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535, description="TCP port."), Web(skip=True)] = 8000
    workers: Annotated[int, Field(ge=1, le=64, description=(
        "Server processes (one per CPU core serves the most). They share the price store "
        "(WHICHGPU_DATABASE_URL: PostgreSQL for several machines); each keeps its own cache "
        "of answers.")), Web(skip=True)] = 1
    log_level: Annotated[str, Field(description=(
        "uvicorn's log level: info shows each request.")), Web(skip=True)] = "warning"
    access_log: Annotated[bool, Field(description=(
        "One JSON line per request on stderr (time, method, route, status, duration, request "
        "id, worker pid); also WHICHGPU_ACCESS_LOG=1.")), Cli(negatable=True),
        Web(skip=True)] = False
    calibration: Annotated[str, Field(description=(
        "The calibration profile that speed and recommend use when a request asks for "
        "calibration=default: 'default' (the one 'whichgpu bench' saved), a FILE, or 'none'. "
        "Requests can never name a file.")), Web(skip=True)] = "default"


# ------------------------------------------------------------------ my machine

ProfileName = Annotated[str, Field(description="The profile's name, e.g. home or lab."),
                        Cli(positional=True, metavar="NAME"), Web(skip=True)]


class ProfileSave(Request):
    """``whichgpu profile save``: describe your machine once (its GPUs, host RAM, power price,
    currency); '--profile NAME' then applies it to every command."""

    COMMAND: ClassVar[str] = "profile save"

    name: ProfileName
    gpu: Annotated[str | None, Field(description=(
        "Your card: a catalog id (rtx-4070) or its memory such as 12GB.")),
        Web(skip=True)] = None
    gpu_spec: Annotated[str | None, Field(description=GPU_SPEC_HELP),
                        Cli(metavar="KEY=VALUE,..."), Web(skip=True)] = None
    count: Annotated[int | None, Field(ge=1, le=64, description="How many of that card."),
                     Web(skip=True)] = None
    host_ram: Annotated[str | None, Field(description="Your system RAM, e.g. 64GB."),
                        Web(skip=True)] = None
    host_memory: Annotated[str | None, Field(description=(
        "System RAM type: ddr4, ddr5-6000, ddr5-4800x8 (MT/s x channels).")),
        Web(skip=True)] = None
    kwh_price: Annotated[str | None, Field(description=(
        "Your electricity per kWh, e.g. 0.25EUR (for tco).")), Web(skip=True)] = None
    currency: Annotated[str | None, Field(description=(
        "Show amounts in this currency.")), Web(skip=True)] = None
    default: Annotated[bool, Field(description=(
        "Apply it to every command without --profile.")), Web(skip=True)] = False
    detect: Annotated[bool, Field(description=(
        "Fill the card, how many and the host RAM from this machine (NVML or nvidia-smi, "
        "as 'whichgpu bench' finds them); what you give here wins.")), Web(skip=True)] = False


class ProfileList(Request):
    """``whichgpu profile list``: the saved profiles (the default marked)."""

    COMMAND: ClassVar[str] = "profile list"

    as_json: Json = False


class ProfileRemove(Request):
    """``whichgpu profile remove``: forget a saved profile."""

    COMMAND: ClassVar[str] = "profile remove"

    name: ProfileName


#: every command, in the order ``whichgpu --help`` lists them
