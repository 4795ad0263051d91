"""Server-side printing: the meta.k8s.io Table kube-apiserver returns for `as=Table` requests.

Three convertors exist in the real server and all three are reproduced here:

* custom resources use the apiextensions table convertor: a NAME column, then the version's
  additionalPrinterColumns evaluated with the kubectl JSONPath dialect (only the first result of
  a column is shown), or a single AGE column when the CRD declares none (`custom_resources`);
* built-in kinds use the printers of pkg/printers/internalversion, which the server always runs
  in wide mode, so priority-1 cells are present and clients drop them unless `-o wide`
  (`printers`, one `printers_*` module per API group or family of kinds);
* kinds without a printer (Role, ClusterRole, CustomResourceDefinition, ...) get the default
  convertor: NAME and CREATED AT, the latter an RFC 3339 timestamp.

`table` assembles the Table; `jsonpath` evaluates printer-column paths; `time_format` holds the
ages and durations (apimachinery's HumanDuration: "5m10s", "3h12m", "2d3h", "4y12d").
"""

from __future__ import annotations

from .columns import CREATION_TIMESTAMP_DESCRIPTION, NAME_DESCRIPTION
from .jsonpath import JSONPath, JSONPathError, jsonpath
from .table import check_include_object, to_table
from .time_format import human_duration, parse_time

__all__ = [
    "CREATION_TIMESTAMP_DESCRIPTION",
    "NAME_DESCRIPTION",
    "JSONPath",
    "JSONPathError",
    "check_include_object",
    "human_duration",
    "jsonpath",
    "parse_time",
    "to_table",
]
