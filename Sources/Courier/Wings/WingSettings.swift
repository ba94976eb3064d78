/// The wings' settings in a ``ClientConfiguration``: each wing keeps one value of a type of its own
/// here (a module cannot add stored properties to the configuration), behind the public properties
/// it adds to ``ClientConfiguration``. Empty unless a wing's setting was set.
package struct WingSettings: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    package init() {}

    /// The wing's settings of type `Settings`, `nil` when none were set.
    package subscript<Settings: Sendable>(_ type: Settings.Type) -> Settings? {
        get { values[ObjectIdentifier(type)] as? Settings }
        set { values[ObjectIdentifier(type)] = newValue }
    }

    /// The wing's settings of type `Settings`, `value` when none were set (to change one field).
    package subscript<Settings: Sendable>(_ type: Settings.Type, default value: @autoclosure () -> Settings) -> Settings {
        get { self[type] ?? value() }
        set { self[type] = newValue }
    }
}
