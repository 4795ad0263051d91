"""The DynamoWorkerMetadata CRD, as the original ships it beside the operator's five.

Unlike the five (`api.crd.definitions`), it has one version (`v1alpha1`, served and stored), no
subresources, no conversion webhook and no category: its objects are written by the Dynamo
runtime of each worker pod, never converted, and not something `kubectl get dynamo` lists.
Its schema comes from `api.v1alpha1.worker_metadata` (`spec.data` a required free-form
object); its one printer column is the age.
"""

from __future__ import annotations

from api.crd.schema import object_schema
from api.kube import Json
from api.v1alpha1 import GROUP, VERSION
from api.v1alpha1.worker_metadata import DynamoWorkerMetadata

__all__ = ["PLURAL", "worker_metadata_crd"]

PLURAL = "dynamoworkermetadatas"


def worker_metadata_crd() -> Json:
    """The CustomResourceDefinition `dynamoworkermetadatas.nvidia.com`."""
    kind = DynamoWorkerMetadata.__name__
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": PLURAL,
                "shortNames": ["dwm"],
                "singular": "dynamoworkermetadata",
            },
            "scope": "Namespaced",
            "versions": [{
                "additionalPrinterColumns": [
                    {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"}],
                "name": VERSION,
                "schema": {"openAPIV3Schema": object_schema(DynamoWorkerMetadata)},
                "served": True,
                "storage": True,
            }],
        },
    }
