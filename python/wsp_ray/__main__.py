"""`python -m wsp_ray tune FILE --ray ADDRESS ...`"""

import sys

from wsp_ray.driver import main

sys.exit(main())
