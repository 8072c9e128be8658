/// A value that builds its JSON form itself instead of through `Encodable`'s containers.
///
/// Encoding a ViewModel's state after each change is the largest part of what a change costs, and most of
/// that is Codable's machinery (a keyed container boxed per level, a dictionary insert per key through
/// it), not the values. A state type on the hot path writes its form directly; ``JSONValueEncoder`` uses
/// it whenever the value it is given conforms. The form must be exactly what the type's `Encodable`
/// conformance gives (the tests compare the two on random values), so either may be used anywhere.
public protocol JSONValueConvertible: Encodable {
    /// The value's JSON form, equal to what ``JSONValueEncoder`` makes of its `Encodable` conformance.
    /// - Parameter memo: the memo of the previous encoding of this value, whose array elements equal to
    ///   this one's are reused (see ``JSONValue/array(_:reusing:_:)``); nil to build everything.
    func jsonValue(reusing memo: EncodingMemo?) -> JSONValue
}

extension JSONValue {
    /// An array of the forms of `elements`, reusing through `memo` the previous encoding's forms of the
    /// elements equal to them (matched by position as ``EncodingMemo`` describes), so that an unchanged
    /// cart line costs a comparison instead of an encoding and shares its storage with the last state's.
    /// - Parameter form: builds one element's form (its `Encodable` form).
    @inlinable
    public static func array<Element: Equatable>(
        _ elements: [Element], reusing memo: EncodingMemo?, _ form: (Element) -> JSONValue
    ) -> JSONValue {
        guard let memo else { return .array(elements.map(form)) }
        let kept = memo.elements(of: Element.self)
        var forms: [JSONValue] = []
        forms.reserveCapacity(elements.count)
        for element in elements {
            if let reused = kept.reuse(element: element) {
                forms.append(reused)
            } else {
                let built = form(element)
                kept.record(element: element, built)
                forms.append(built)
            }
        }
        return .array(forms)
    }

    /// The form of `value`, or `null` when it is nil (an optional encoded as an explicit `null`).
    public static func orNull<Wrapped>(_ value: Wrapped?, _ form: (Wrapped) -> JSONValue) -> JSONValue {
        value.map(form) ?? .null
    }
}
