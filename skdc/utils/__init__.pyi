# Public names of skdc.utils, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._linalg import center as center
from ._linalg import haar_orthogonal as haar_orthogonal
from ._linalg import polar as polar
from ._linalg import polar_batched as polar_batched
