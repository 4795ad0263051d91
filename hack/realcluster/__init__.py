"""A real Kubernetes control plane for the tests: kube-apiserver, kube-controller-manager and
kube-scheduler v1.20.2 built from Debian's source package, with Debian's etcd.

`python -m hack.realcluster.build` builds (or finds cached) the binaries;
`python -m hack.realcluster --port 0 --kubeconfig F` runs a control plane on loopback;
`hack.realcluster.testing.running_control_plane` starts one from a test.
"""
