// The realtime messages modules push reach the handlers module pages
// register through the kit (onRealtime), and only those of their type.
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { createPinia, setActivePinia } from 'pinia'
import { deliver, onRealtime } from '@/components/notice/hub'

describe('module realtime handlers (kit 1.1 onRealtime)', () => {
  beforeEach(() => setActivePinia(createPinia()))
  it('delivers a pushed type to its handlers until they stop', () => {
    const shipped = vi.fn()
    const other = vi.fn()
    const stop = onRealtime('order-shipped', shipped)
    onRealtime('order-paid', other)
    deliver(JSON.stringify({ type: 'order-shipped', data: { orderId: 7 } }))
    expect(shipped).toHaveBeenCalledWith({ orderId: 7 })
    expect(other).not.toHaveBeenCalled()
    stop()
    deliver(JSON.stringify({ type: 'order-shipped', data: { orderId: 8 } }))
    expect(shipped).toHaveBeenCalledTimes(1)
  })

  it('a failing handler does not stop the others; the kernel types are not delivered', () => {
    const bad = vi.fn(() => {
      throw new Error('boom')
    })
    const good = vi.fn()
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    onRealtime('stock-low', bad)
    onRealtime('stock-low', good)
    onRealtime('permissions-changed', good)
    deliver(JSON.stringify({ type: 'stock-low', data: 3 }))
    expect(bad).toHaveBeenCalledWith(3)
    expect(good).toHaveBeenCalledTimes(1)
    expect(good).toHaveBeenCalledWith(3)
    deliver(JSON.stringify({ type: 'permissions-changed' }))
    deliver('not json')
    expect(good).toHaveBeenCalledTimes(1)
    spy.mockRestore()
  })
})
