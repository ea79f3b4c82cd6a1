"""A user's project as a request: requirements on the command line, in pip requirements files (``-r``/``-c``) and
in a pyproject (``--project``), split into the torch family (resolved against the matrix) and what rides along,
with markers evaluated for each target machine (``torch_install.markers``)."""
