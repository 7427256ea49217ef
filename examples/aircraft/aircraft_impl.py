"""The implementation of ``flight.Airliner`` (stl/flight/flight.stl) for aircraft.yaml.

:class:`StraightFlight` moves its aircraft along the x axis of the world frame at its configured
cruise speed, by the time that passed since its previous cycle (``now - last`` of
``api.get_time()``), and publishes the RPR position in the dead-reckoning variant ``spatial``
(alternative ``SpatialFPW``: fixed orientation, constant velocity, world coordinates). The
package ``gen`` is generated from the STL with the RPR FOM on the include path (see README.md).
"""

from __future__ import annotations

from gen.flight import AirlinerBase
from gen.rpr.RPR_Base_v2_0 import (
    OrientationStruct,
    SpatialFPStruct,
    SpatialVariantStruct,
    VelocityVectorStruct,
    WorldLocationStruct,
)

from sengen.runtime import RunApi, TimeStamp

NS_PER_S = 1_000_000_000
# Where every flight starts: 10 km up, at the origin of the world frame (metres).
START = WorldLocationStruct(x=0.0, y=0.0, z=10_000.0)
LEVEL = OrientationStruct(psi=0.0, theta=0.0, phi=0.0)


def spatial(location: WorldLocationStruct, speed: float) -> SpatialVariantStruct:
    """The RPR dead-reckoning record of an aircraft at ``location`` flying along x."""
    velocity = VelocityVectorStruct(x_velocity=speed, y_velocity=0.0, z_velocity=0.0)
    moving = SpatialFPStruct(
        world_location=location, is_frozen=False, orientation=LEVEL, velocity_vector=velocity
    )
    return SpatialVariantStruct("SpatialFPW", moving)


class StraightFlight(AirlinerBase):
    """Flies straight and level; ``flown`` is the distance since the start, in metres."""

    _last: TimeStamp | None

    def registered(self, api: RunApi) -> None:
        self._last = None
        self.set_next_spatial(spatial(START, self.cruise_speed))

    def update(self, api: RunApi) -> None:
        now = api.get_time()
        # The first cycle has nothing to difference against and moves nothing.
        elapsed = (now - (now if self._last is None else self._last)).ns / NS_PER_S
        self._last = now
        flown = self.flown + self.cruise_speed * elapsed
        self.set_next_flown(flown)
        location = WorldLocationStruct(x=START.x + flown, y=START.y, z=START.z)
        self.set_next_spatial(spatial(location, self.cruise_speed))

    def unregistered(self, api: RunApi) -> None:
        api.logger.info("%s flew %.0f m at %.0f m/s", self.name, self.flown, self.cruise_speed)
