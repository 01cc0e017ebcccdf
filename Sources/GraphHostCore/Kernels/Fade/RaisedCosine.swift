import Glibc

/// The S-shaped fade (computed by the control world into tables, or on decoder threads) of swaps and damage
/// concealment: 0 at step 0, 1 at step `steps`, never above 1.
public enum RaisedCosine {
    /// The gain after `step` of `steps` steps.
    public static func gain(_ step: Int, of steps: Int) -> Float {
        Float(0.5 - 0.5 * cos(Double.pi * Double(step) / Double(max(1, steps))))
    }
}
