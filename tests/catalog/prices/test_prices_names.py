"""Provider GPU names map to catalog ids on evidence; SXM, PCIe and NVL are never collapsed."""

import pytest

from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.prices.names import PENDING_IDS, load_rules, map_gpu_name


@pytest.mark.parametrize(("name", "gpu"), [
    ("H100 PCIE", "h100-pcie"),  # Vast's spelling
    ("H100 SXM", "h100-sxm"),
    ("H100 NVL", "h100-nvl"),
    ("A100-80GB-SXM", "a100-80gb-sxm"),  # SkyPilot's spelling
    ("A100 80GB PCIe", "a100-80gb-pcie"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
    ("RTX 4090 24GB", "rtx-4090"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("NVIDIA H100 80GB HBM3", "h100-sxm"),  # HBM3 at 80 GB is the SXM5 board
    ("h100-sxm", "h100-sxm"),  # our own id
    ("L40S", "l40s"),
    ("MI300X", "mi300x"),
])
def test_tricky_provider_names_map_to_one_variant(name, gpu):
    m = map_gpu_name(name)
    assert m.gpu == gpu, m.how


@pytest.mark.parametrize(("name", "why"), [
    ("H100", "ambiguous"),
    ("A100-80GB", "SXM4 and PCIe"),  # a catalog alias for users, but not evidence in data
    ("A100 40GB", "SXM4 and PCIe"),
    ("Tesla V100 16GB", "SXM2 and PCIe"),
    ("GH200", "not in the catalog"),
    ("", "no GPU name"),
])
def test_names_that_cannot_be_told_apart_are_reported_not_guessed(name, why):
    m = map_gpu_name(name)
    assert m.gpu is None and why in m.how


def test_an_ambiguous_name_lists_the_variants_it_could_be():
    assert set(map_gpu_name("H100").candidates) == {"h100-sxm", "h100-pcie", "h100-nvl"}


@pytest.mark.parametrize(("provider", "instance", "name", "memory", "gpu"), [
    ("aws", "p5.48xlarge", "H100", 80, "h100-sxm"),
    ("aws", "p4d.24xlarge", "A100", 40, "a100-40gb"),
    ("aws", "p4de.24xlarge", "A100", 80, "a100-80gb-sxm"),
    ("gcp", "a3-megagpu-8g", "H100", 80, "h100-sxm"),  # GCP's "H100 Mega" is an SXM board
    ("gcp", "a2-ultragpu-1g", "A100", 80, "a100-80gb-sxm"),
    ("azure", "Standard_NC24ads_A100_v4", "A100", 80, "a100-80gb-pcie"),
    ("azure", "Standard_NC40ads_H100_v5", "H100NVL", 94, "h100-nvl"),
    ("lambdalabs", "gpu_1x_h100_pcie", "H100", 80, "h100-pcie"),
    ("lambdalabs", "gpu_8x_h100_sxm5", "H100", 80, "h100-sxm"),
    ("runpod", "NVIDIA H100 80GB HBM3", "H100", 80, "h100-sxm"),
    ("runpod", "NVIDIA H100 PCIe", "H100", 80, "h100-pcie"),
    ("runpod", "NVIDIA A100 80GB PCIe", "A100", 80, "a100-80gb-pcie"),
    ("oci", "BM.GPU.H100.8", "H100", 80, "h100-sxm"),
    ("verda", "1H100.80S.30V", "H100", 80, "h100-sxm"),
    ("verda", "1A100.22V", "A100", 40, "a100-40gb"),
    ("runpod", "NVIDIA RTX A6000", "A6000", 48, "rtx-a6000"),
    ("lambdalabs", "gpu_1x_a6000", "A6000", 48, "rtx-a6000"),
    ("lambdalabs", "gpu_1x_a100", "A100", 40, "a100-40gb-pcie"),  # Lambda's plain A100: PCIe
    ("lambdalabs", "gpu_8x_a100_sxm4", "A100", 40, "a100-40gb"),
])
def test_gpuhunt_names_use_the_instance_type_to_tell_variants_apart(provider, instance, name,
                                                                    memory, gpu):
    m = map_gpu_name(name, provider=provider, instance=instance, memory_gb=memory, gpuhunt=True)
    assert m.gpu == gpu, m.how


@pytest.mark.parametrize(("provider", "instance", "name", "memory", "why"), [
    ("vastai", "12345678", "H100", 80, "SXM5 and PCIe"),  # Vast offers are ids
    ("vastai", "12345679", "A100", 80, "SXM4 and PCIe"),
    ("azure", "Standard_NV6ads_A10_v5", "A10", 4, "fractional"),  # 1/6 of an A10
    ("gcp", "g4-standard-48", "RTXPRO6000", 96, "ambiguous"),  # three RTX PRO 6000 editions
    ("lambdalabs", "gpu_1x_rtx6000", "RTX6000", 24, "Quadro RTX 6000"),
])
def test_gpuhunt_names_without_evidence_are_reported(provider, instance, name, memory, why):
    m = map_gpu_name(name, provider=provider, instance=instance, memory_gb=memory, gpuhunt=True)
    assert m.gpu is None and why in m.how


def test_provider_rules_apply_to_a_users_file_with_that_provider():
    assert map_gpu_name("NVIDIA H100 PCIe", provider="RunPod").gpu == "h100-pcie"
    assert map_gpu_name("H100", provider="verda").gpu is None  # verda rule is for gpuhunt names
    # gpuhunt's own vocabulary does not leak into other data: "H200" in a file is ambiguous.
    assert map_gpu_name("H200").gpu is None
    assert map_gpu_name("H200", gpuhunt=True).gpu == "h200-sxm"


def test_alias_table_rows_have_known_ids_valid_patterns_and_evidence():
    ids = {g.id for g in default_catalog().gpus}
    rules = load_rules()
    assert len(rules) > 30
    for r in rules:
        assert r.gpu is None or r.gpu in ids or r.gpu in PENDING_IDS
        assert r.evidence and r.match in ("instance", "name")


def test_a_rule_for_an_agreed_id_the_catalog_lacks_reports_it_never_guesses():
    ids = {g.id for g in default_catalog().gpus}
    m = map_gpu_name("RTX3090", provider="vastai", instance="1x-RTX_3090_Ti-32-65536",
                     via="skypilot")
    if "rtx-3090-ti" in ids:  # the catalog engineer's cards are merged
        assert m.gpu == "rtx-3090-ti"
    else:
        assert m.gpu is None and m.how == "catalog has no rtx-3090-ti"
    # the plain name without the instance is the RTX 3090, not the Ti
    assert map_gpu_name("RTX3090", provider="vastai", instance="1x-RTX_3090-32-65536",
                        via="skypilot").gpu == "rtx-3090"


@pytest.mark.parametrize("name, cloud, instance, gpu", [
    ("H100", "runpod", "1x_H100_SECURE", "h100-pcie"),
    ("H100-SXM", "runpod", "1x_H100-SXM_SECURE", "h100-sxm"),
    ("A100-80GB", "runpod", "1x_A100-80GB_SECURE", "a100-80gb-pcie"),
    ("A100-80GB-SXM", "runpod", "8x_A100-80GB-SXM_SECURE", "a100-80gb-sxm"),
    ("A100-80GB", "lambdalabs", "gpu_8x_a100_80gb_sxm4", "a100-80gb-sxm"),
    ("H100", "vastai", "1x-H100_SXM-32-65536", "h100-sxm"),
    ("H100", "nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", "h100-sxm"),
    ("H100", "cudo", "epyc-genoa-h100-nvl-pcie_1x2v4gb", "h100-nvl"),
    ("RTX6000-Ada", "runpod", "1x_RTX6000-Ada_SECURE", "rtx-6000-ada"),
    ("H200-SXM", "runpod", "1x_H200-SXM_SECURE", "h200-sxm"),
    ("MI300X", "runpod", "8x_MI300X_SECURE", "mi300x"),
])
def test_skypilot_names_map_by_instance_first(name, cloud, instance, gpu):
    assert map_gpu_name(name, provider=cloud, instance=instance, via="skypilot").gpu == gpu


def test_runpods_rtx_pro_6000_wk_is_the_workstation_edition_when_its_memory_agrees():
    """RunPod's GpuInfo names it 'RTX PRO 6000 WK' with 96 GB; the rule wants that memory."""
    def wk(memory):
        return map_gpu_name("RTXPRO6000-WK", provider="runpod", instance="1x_RTXPRO6000-WK_SECURE",
                            via="skypilot", memory_gb=memory)
    assert wk(96.0).gpu == "rtx-pro-6000-ws"
    assert wk(48.0).gpu is None and wk(None).gpu is None


@pytest.mark.parametrize("name, cloud, instance", [
    ("H100", "vastai", "1x-H100-32-65536"),  # no form factor in the instance type
    ("H200", "vastai", "1x-H200-32-65536"),
    ("A100", "lambdalabs", "some_new_a100_type"),
    ("RTXPRO6000", "runpod", "1x_RTXPRO6000_SECURE"),
    ("H200", "runpod", "1x_H200_SECURE"),  # SXM or NVL: only RunPod's -SXM name says which
])
def test_skypilot_names_that_cannot_be_told_apart_are_reported(name, cloud, instance):
    m = map_gpu_name(name, provider=cloud, instance=instance, via="skypilot")
    assert m.gpu is None and m.how


def test_alias_table_errors_name_the_row_and_field(tmp_path):
    bad = tmp_path / "names.csv"
    bad.write_text("provider,match,pattern,memory_gb,gpu,evidence\n"
                   "aws,instance,p5\\..*,,h100-sxm,ok\n"
                   "aws,instance,p9\\..*,,h900,made up\n")
    with pytest.raises(Exception, match=r"row 3, field 'gpu'"):
        load_rules(bad)


def test_a100_40gb_without_a_form_factor_is_reported_not_guessed():
    m = map_gpu_name("A100 40GB")
    assert m.gpu is None and "form factor" in m.how
    assert map_gpu_name("A100-PCIE-40GB").gpu == "a100-40gb-pcie"
    assert map_gpu_name("A100-SXM4-40GB").gpu == "a100-40gb"


# ---------------------------------------------------------------- the review's four guesses

def _vast_feed(instance: str, name: str, count: int, total_mib: int):
    """One Vast row as SkyPilot's v8 catalog writes it (GpuInfo memory is the whole
    instance's), through the same reader and feed builder as the shipped snapshot."""
    from whichgpu.catalog.prices.skypilot import feed_from_rows, read_vms_csv

    info = (f"{{'Gpus': [{{'Name': '{name}', 'Count': {count}, 'MemoryInfo': "
            f"{{'SizeInMiB': {total_mib}}}}}], 'TotalGpuMemoryInMiB': {total_mib}}}")
    text = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
            f"SpotPrice,Region\n{instance},{name},{count},32,64.0,\"{info}\",0.40,0.00,"
            "\"Texas, US, NA\"\n")
    rows, _ = read_vms_csv(text, path="vast.csv", cloud="vast")
    return feed_from_rows(rows, cloud="vast", observed_at="2026-12-01", source="test")


@pytest.mark.parametrize(("instance", "name", "count", "total_mib", "why"), [
    # the card is a 3060 Ti (8 GB), which SkyPilot collapses to RTX3060 (12 GB)
    ("2x-RTX_3060_Ti-32-65536", "RTX3060", 2, 16384, "3060 Ti"),
    # a 49,140 MiB card sold as an RTX 4090 is not the 24 GB catalog card
    ("1x-RTX_4090-32-65536", "RTX4090", 1, 49140, "memory"),
])
def test_a_vast_card_that_matches_no_catalog_card_exactly_is_unmapped(instance, name, count,
                                                                      total_mib, why):
    result = _vast_feed(instance, name, count, total_mib)
    assert result.offers == []
    (u,) = result.unmapped
    assert u.instance == instance and why in u.reason and u.rows == 1


@pytest.mark.parametrize(("instance", "name", "count", "total_mib", "gpu"), [
    # SkyPilot's RTX4070 and RTX4080 are what Vast's instance type calls the SUPER cards
    ("2x-RTX_4070S_Ti-32-65536", "RTX4070", 2, 32752, "rtx-4070-ti-super"),
    ("1x-RTX_4080S-32-65536", "RTX4080", 1, 16376, "rtx-4080-super"),
    ("1x-RTX_4090-32-65536", "RTX4090", 1, 24564, "rtx-4090"),
])
def test_a_vast_row_maps_to_the_card_its_instance_type_names(instance, name, count, total_mib,
                                                             gpu):
    result = _vast_feed(instance, name, count, total_mib)
    assert [o.gpu for o in result.offers] == [gpu] and not result.unmapped


def test_a_vast_card_named_apart_from_its_accelerator_without_a_rule_is_unmapped():
    """The base model's rule (RTX4080 -> rtx-4080) does not apply to a row whose instance
    type names another card that no rule knows."""
    result = _vast_feed("1x-RTX_4080_Ultra-32-65536", "RTX4080", 1, 16376)
    (u,) = result.unmapped
    assert result.offers == [] and "RTX 4080 Ultra" in u.reason and "does not say" in u.reason
    assert u.candidates == ("rtx-4080",)  # what the base model would have guessed


def test_memory_per_card_is_read_the_way_each_cloud_writes_gpuinfo():
    from whichgpu.catalog.prices.skypilot import gpu_memory_gb

    per_card = "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 81920}"
    assert gpu_memory_gb(per_card, 8, "lambda") == pytest.approx(80)  # MiB per card
    assert gpu_memory_gb("{'SizeInMiB': 80}", 2, "runpod") == pytest.approx(80)  # GB per card
    assert gpu_memory_gb("{'SizeInMiB': 65214}", 2, "vast") == pytest.approx(31.8, abs=0.1)
    assert gpu_memory_gb('{"SizeInMiB":655360}', 8, "primeintellect") == pytest.approx(80)
    assert gpu_memory_gb("{'SizeInMiB': 0}", 1, "seeweb") is None  # 0 says nothing
    assert gpu_memory_gb(per_card, 1, "a-cloud-we-never-read") is None
