"""CustomResourceDefinitions generated from the models (pure: returns JSON, writes nothing)."""

from api.crd.definitions import CRDS, Column, CrdDefinition, build_crd, build_crds
from api.crd.schema import object_schema
from api.crd.worker_metadata import worker_metadata_crd

__all__ = ["CRDS", "Column", "CrdDefinition", "build_crd", "build_crds", "object_schema",
           "worker_metadata_crd"]
