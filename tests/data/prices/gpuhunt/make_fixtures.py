"""Write the recorded gpuhunt catalog files in this folder, with gpuhunt's own writer.

    .venv/bin/python tests/data/prices/gpuhunt/make_fixtures.py

Each ``{provider}.csv`` has the exact shape of a file gpuhunt publishes
(``v3/{provider}/{version}/catalog.zip`` -> ``{provider}.csv``, columns
``gpuhunt._internal.storage.CATALOG_V2_FIELDS``), written by ``gpuhunt._internal.storage.dump``
from ``gpuhunt.CatalogItem`` rows. The rows could not be downloaded here (no network): the
instance types, GPU names, memories, locations and gpuhunt's name mapping follow gpuhunt
0.1.34's providers; the prices are illustrative, of the right size, not quotes.
"""

from pathlib import Path

from gpuhunt import AcceleratorVendor as V
from gpuhunt import CatalogItem
from gpuhunt._internal.storage import dump

HERE = Path(__file__).parent
NV, AMD, GOOGLE = V.NVIDIA, V.AMD, V.GOOGLE


def item(provider, instance, location, price, gpu_count, gpu_name, gpu_memory, *, spot=False,
         cpu=8, memory=32.0, vendor=NV, flags=()):
    return CatalogItem(provider=provider, instance_name=instance, location=location,
                       price=price, cpu=cpu, memory=memory, gpu_count=gpu_count,
                       gpu_name=gpu_name, gpu_memory=gpu_memory, spot=spot, disk_size=None,
                       gpu_vendor=vendor if gpu_count else None, flags=list(flags))


ROWS = {
    "aws": [
        item("aws", "p5.48xlarge", "us-east-1", 55.04, 8, "H100", 80.0, cpu=192, memory=2048.0),
        item("aws", "p5.48xlarge", "us-east-1", 30.12, 8, "H100", 80.0, spot=True, cpu=192,
             memory=2048.0),
        item("aws", "p5.48xlarge", "eu-west-1", 57.6, 8, "H100", 80.0, cpu=192, memory=2048.0),
        item("aws", "p4d.24xlarge", "us-east-1", 21.96, 8, "A100", 40.0, cpu=96, memory=1152.0),
        item("aws", "p4de.24xlarge", "us-east-1", 27.45, 8, "A100", 80.0, cpu=96,
             memory=1152.0),
        item("aws", "g5.xlarge", "us-east-1", 1.006, 1, "A10G", 24.0, cpu=4, memory=16.0),
        item("aws", "g6e.xlarge", "us-east-1", 1.861, 1, "L40S", 48.0, cpu=4, memory=32.0),
        item("aws", "g4dn.xlarge", "us-east-1", 0.526, 1, "T4", 16.0, cpu=4, memory=16.0),
        item("aws", "c5.large", "us-east-1", 0.085, 0, None, None, cpu=2, memory=4.0),
    ],
    "gcp": [
        item("gcp", "a3-highgpu-8g", "us-central1-a", 88.25, 8, "H100", 80.0, cpu=208,
             memory=1872.0),
        item("gcp", "a3-megagpu-8g", "us-central1-a", 91.54, 8, "H100", 80.0, cpu=208,
             memory=1872.0),
        item("gcp", "a2-highgpu-1g", "us-central1-a", 3.67, 1, "A100", 40.0, cpu=12,
             memory=85.0),
        item("gcp", "a2-ultragpu-1g", "us-central1-a", 5.07, 1, "A100", 80.0, cpu=12,
             memory=170.0),
        item("gcp", "g2-standard-4", "us-central1-a", 0.71, 1, "L4", 24.0, cpu=4, memory=16.0),
        item("gcp", "v5litepod-1", "us-central1-a", 1.2, 1, "v5litepod", 16.0, cpu=24,
             memory=48.0, vendor=GOOGLE),
        item("gcp", "g4-standard-48", "us-central1-b", 4.5, 1, "RTXPRO6000", 96.0, cpu=48,
             memory=180.0),
    ],
    "azure": [
        item("azure", "Standard_ND96isr_H100_v5", "eastus", 98.32, 8, "H100", 80.0, cpu=96,
             memory=1900.0),
        item("azure", "Standard_NC40ads_H100_v5", "eastus", 6.98, 1, "H100NVL", 94.0, cpu=40,
             memory=320.0),
        item("azure", "Standard_NC24ads_A100_v4", "eastus", 3.67, 1, "A100", 80.0, cpu=24,
             memory=220.0),
        item("azure", "Standard_NV6ads_A10_v5", "eastus", 0.454, 1, "A10", 4.0, cpu=6,
             memory=55.0),
        item("azure", "Standard_NC4as_T4_v3", "eastus", 0.526, 1, "T4", 16.0, cpu=4,
             memory=28.0),
    ],
    "lambdalabs": [
        item("lambdalabs", "gpu_1x_h100_pcie", "us-west-1", 2.49, 1, "H100", 80.0, cpu=26,
             memory=214.8),
        item("lambdalabs", "gpu_8x_h100_sxm5", "us-east-1", 23.92, 8, "H100", 80.0, cpu=208,
             memory=1933.2),
        item("lambdalabs", "gpu_1x_a100", "us-west-1", 1.29, 1, "A100", 40.0, cpu=30,
             memory=214.8),
        item("lambdalabs", "gpu_1x_a100_sxm4", "us-east-1", 1.29, 1, "A100", 40.0, cpu=30,
             memory=214.8),
        item("lambdalabs", "gpu_8x_a100_80gb_sxm4", "us-east-1", 14.32, 8, "A100", 80.0,
             cpu=240, memory=1933.2),
        item("lambdalabs", "gpu_1x_gh200", "us-east-3", 1.49, 1, "GH200", 96.0, cpu=64,
             memory=463.9, flags=("arm",)),
        item("lambdalabs", "gpu_1x_a6000", "us-west-1", 0.8, 1, "A6000", 48.0, cpu=14,
             memory=107.4),
    ],
    "runpod": [
        item("runpod", "NVIDIA H100 80GB HBM3", "CA-MTL-1", 2.69, 1, "H100", 80.0, cpu=16,
             memory=251.0),
        item("runpod", "NVIDIA H100 80GB HBM3", "CA-MTL-1", 5.38, 2, "H100", 80.0, cpu=32,
             memory=502.0),
        item("runpod", "NVIDIA H100 PCIe", "US-KS-2", 2.39, 1, "H100", 80.0, cpu=16,
             memory=188.0),
        item("runpod", "NVIDIA H100 NVL", "EU-RO-1", 2.79, 1, "H100NVL", 94.0, cpu=16,
             memory=94.0),
        item("runpod", "NVIDIA A100-SXM4-80GB", "EU-RO-1", 1.74, 1, "A100", 80.0, cpu=16,
             memory=125.0),
        item("runpod", "NVIDIA A100 80GB PCIe", "US-KS-2", 1.64, 1, "A100", 80.0, cpu=8,
             memory=117.0),
        item("runpod", "NVIDIA GeForce RTX 4090", "EU-RO-1", 0.69, 1, "RTX4090", 24.0, cpu=6,
             memory=41.0),
        item("runpod", "NVIDIA RTX A6000", "US-KS-2", 0.49, 1, "A6000", 48.0, cpu=8,
             memory=50.0),
        item("runpod", "AMD Instinct MI300X OAM", "EU-RO-1", 2.49, 1, "MI300X", 192.0, cpu=24,
             memory=283.0, vendor=AMD),
    ],
    "verda": [
        item("verda", "1H100.80S.30V", "FIN-01", 2.19, 1, "H100", 80.0, cpu=30, memory=120.0),
        item("verda", "1H100.80S.30V", "FIN-01", 1.1, 1, "H100", 80.0, spot=True, cpu=30,
             memory=120.0),
        item("verda", "1A100.22V", "FIN-01", 0.86, 1, "A100", 40.0, cpu=22, memory=80.0),
        item("verda", "1L40S.20V", "FIN-02", 0.91, 1, "L40S", 48.0, cpu=20, memory=60.0),
    ],
}

if __name__ == "__main__":
    for provider, rows in ROWS.items():
        dump(rows, str(HERE / f"{provider}.csv"))
        print(f"{provider}.csv: {len(rows)} rows")
