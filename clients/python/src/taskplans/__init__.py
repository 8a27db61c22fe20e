"""Python client of the task-plan service.

Generated messages and stubs: ``taskplans.v1`` (``plan_pb2``, ``plan_service_pb2``,
``plan_service_pb2_grpc``, ``task_pb2``, ``task_pb2_grpc``). Hand-written helpers:
``taskplans.client.dial`` and the error readers in ``taskplans.errors``.
"""
