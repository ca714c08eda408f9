from tests.services import local_redis, private_redis  # noqa: F401
