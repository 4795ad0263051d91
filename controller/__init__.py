"""The controller runtime: informers, work queue, controllers, manager, leader election."""
