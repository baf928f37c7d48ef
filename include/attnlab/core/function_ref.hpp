// attnlab/core/function_ref.hpp: a non-owning reference to a callable (like C++26 std::function_ref).
//
// What it is for: passing a lambda to a call that uses it only before returning
// (parallel_for), without std::function's heap allocation: a lambda capturing more than two
// references is heap-allocated by std::function, and the flash tiles issue thousands of
// parallel_for calls per training step. Not for: storing a callable beyond the call it was
// passed to; the referenced object must outlive every use.
//
//   void for_each_row(std::size_t n, attnlab::FunctionRef<void(std::size_t)> body);
//   for_each_row(rows, [&](std::size_t r) { out[r] = in[r] * scale; });  // no allocation
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace attnlab {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
public:
    // Refers to f (a function object or function), which must outlive this FunctionRef's uses.
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                                std::is_invocable_r_v<R, F&, Args...>>>
    FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): converts like std::function
        : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* object, Args... args) -> R {
              return (*static_cast<std::add_pointer_t<std::remove_reference_t<F>>>(object))(
                  std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    R (*call_)(void*, Args...);
};

}  // namespace attnlab
