"""Score the serving simulation's percentiles against validation/serving.csv (see
whichgpu.estimate.validation.traffic). Usage: python scripts/check_serving_traffic.py
[--all-means]"""

import sys

from whichgpu.estimate.validation.traffic import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
