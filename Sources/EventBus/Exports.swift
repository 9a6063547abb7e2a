// The client speaks the events, JSON and wire formats of EventBusCore: whoever imports
// EventBus gets them too.
@_exported import EventBusCore
