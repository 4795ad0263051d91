"""CRD conversion by webhook, as kube-apiserver does it for `spec.conversion.strategy: Webhook`.

Every read is answered in the version asked for and every write stored in the storage
version: where the stored object's apiVersion differs, the CRD's webhook converts it
(`webhook_converter`: one ConversionReview per object, kube-apiserver's errors). The verbs
(`operations.Operations`) stay synchronous and ask `answers.to_version`; the HTTP layer runs
each request under `ConversionWebhooks.run`, which calls the webhook for what a request was
missing and runs it again (`answers`). Watches convert their events as they send them; a
failed conversion ends the watch with an ERROR event carrying the 500 Status. The `None`
strategy only rewrites apiVersion.
"""

from .answers import ConversionPending, RequestConversions, all_to_version, to_version, webhook_of
from .webhook_converter import ConversionWebhooks

__all__ = ["ConversionPending", "ConversionWebhooks", "RequestConversions", "all_to_version",
           "to_version", "webhook_of"]
